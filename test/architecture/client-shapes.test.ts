import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { restatedShapes } from '../support/restated-shapes.js';

/**
 * The client re-exports the API's shapes from the contract instead of restating them
 * (see `test/support/restated-shapes.ts` for what counts as a restatement), and the
 * checker finds planted restatements.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

t.test('the checker finds planted restatements, and lets re-exports and aliases be', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'memql-client-shapes-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'contract'));
  mkdirSync(join(dir, 'client'));
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
  writeFileSync(
    join(dir, 'contract/index.ts'),
    [
      'export interface Shape { readonly a: string; readonly b: number }',
      'export interface Other { readonly x: string; readonly y: string }',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'client/good.ts'),
    [
      "import type { Shape } from '../contract/index.js';",
      "export type { Shape } from '../contract/index.js';",
      "export type { Other as Renamed } from '../contract/index.js';",
      '/** The same type under another name. */',
      'export type ShapeAlias = Shape;',
      '/** What the client sends: its own. */',
      'export interface Options { readonly limit?: number; readonly before?: string }',
      'declare function field<T>(body: unknown, key: string): T;',
      'export async function read(http: { json(): Promise<unknown> }) {',
      '  const body = await http.json();',
      "  return [field<Shape[]>(body, 's'), body as Partial<Shape>, field<string | null>(body, 'n')];",
      '}',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'client/bad.ts'),
    [
      'export interface Shape { a: string; b: number }',
      'export interface Copy { x: string; y: string }',
      'declare function field<T>(body: unknown, key: string): T;',
      'export async function read(http: { json(): Promise<unknown> }) {',
      '  const body = await http.json();',
      "  const copy = field<Copy>(body, 'c');",
      '  return [copy, (await http.json()) as { z: number }];',
      '}',
      '',
    ].join('\n'),
  );
  const found = restatedShapes(join(dir, 'client'), join(dir, 'contract/index.ts'));
  t.equal(found.length, 4, found.join('\n'));
  t.match(found, [
    /^client\/bad\.ts: Shape restates the contract's Shape/,
    /^client\/bad\.ts: Copy has exactly the fields of the contract's Other/,
    /^client\/bad\.ts:6: reads an answer as Copy, declared in /,
    /^client\/bad\.ts:7: reads an answer as an inline shape \{ z: number \}/,
  ]);
});

t.test('the client re-exports the shapes of the API from the contract', async (t) => {
  const found = restatedShapes(join(root, 'src/client'), join(root, 'src/contract/index.ts'));
  t.same(found, [], 'define a wire shape once in src/contract/ and re-export it from the client');
});
