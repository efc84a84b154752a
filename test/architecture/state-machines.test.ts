import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';
import { REPO_ROOT } from '../support/readme.js';

/**
 * Distinct machines get distinct names: every lifecycle declared under src/ (with
 * `defineStateMachine`) has a const, a state type and a log name (the `machine` field
 * of its lines, and the start of their message) that no other lifecycle uses, so a
 * reader of the code or of the logs never takes one machine for another.
 */

/** One declared lifecycle: where, its const, its state type and its log name. */
interface Declared {
  readonly file: string;
  readonly constant: string;
  readonly type: string;
  readonly machine: string;
}

const DECLARATION_RE = /export const (\w+) = defineStateMachine<(\w+)>\(\s*'([^']+)'/g;

/** The lifecycles declared in one module's text. */
function declarations(file: string, text: string): Declared[] {
  return [...text.matchAll(DECLARATION_RE)].map((m) => ({
    file,
    constant: m[1]!,
    type: m[2]!,
    machine: m[3]!,
  }));
}

/** Each name used by more than one lifecycle, with the files that use it. */
function clashes(all: readonly Declared[]): string[] {
  const found: string[] = [];
  for (const key of ['constant', 'type', 'machine'] as const) {
    const by = new Map<string, string[]>();
    for (const d of all) by.set(d[key], [...(by.get(d[key]) ?? []), d.file]);
    for (const [name, files] of by) {
      if (files.length > 1) found.push(`${key} ${name}: ${files.join(', ')}`);
    }
  }
  return found;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

t.test('the declaration reader and the clash check find a planted clash', async (t) => {
  const a = declarations(
    'a.ts',
    "export const LINK_LIFECYCLE = defineStateMachine<LinkState>(\n  'link',\n  'connecting',\n  {});",
  );
  const b = declarations(
    'b.ts',
    "export const LINK_LIFECYCLE = defineStateMachine<LinkState>('link', 'new', {});",
  );
  const c = declarations(
    'c.ts',
    "export const PEER_LIFECYCLE = defineStateMachine<PeerState>('peer', 'new', {});",
  );
  t.same(a, [{ file: 'a.ts', constant: 'LINK_LIFECYCLE', type: 'LinkState', machine: 'link' }]);
  t.same(clashes([...a, ...b, ...c]), [
    'constant LINK_LIFECYCLE: a.ts, b.ts',
    'type LinkState: a.ts, b.ts',
    'machine link: a.ts, b.ts',
  ]);
  t.same(clashes([...a, ...c]), []);
});

t.test('every lifecycle under src/ has names of its own', async (t) => {
  const all = tsFiles(join(REPO_ROOT, 'src')).flatMap((file) =>
    declarations(relative(REPO_ROOT, file), readFileSync(file, 'utf8')),
  );
  t.ok(all.length >= 7, `the reader found the lifecycles (${all.length})`);
  t.ok(
    all.some((d) => d.machine === 'worker-link') && all.some((d) => d.machine === 'worker-stream'),
    "the worker's link and the agent's stream of a worker are both declared",
  );
  t.same(clashes(all), []);
});
