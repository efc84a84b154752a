import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

/**
 * Structural rules of the code base, checked on the TypeScript sources: no import
 * cycles, nothing under src/ reads the process environment, the contract is pure,
 * and src/ shows the parts of the design.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...tsFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const IMPORT_RE =
  /(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Relative imports of a file, resolved to source paths. */
function importsOf(file: string): { spec: string; target: string | null }[] {
  const text = readFileSync(file, 'utf8');
  const found: { spec: string; target: string | null }[] = [];
  for (const m of text.matchAll(IMPORT_RE)) {
    const spec = (m[1] ?? m[2])!;
    const target = spec.startsWith('.')
      ? resolve(dirname(file), spec).replace(/\.js$/, '.ts')
      : null;
    found.push({ spec, target });
  }
  return found;
}

const sources = [...tsFiles(join(root, 'src')), ...tsFiles(join(root, 'nodes'))];

/** Finds one import cycle among `files`, or null. */
function findCycle(graph: Map<string, string[]>): string[] | null {
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  function visit(node: string): string[] | null {
    state.set(node, 'visiting');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'visiting') return [...stack.slice(stack.indexOf(next)), next];
      if (!state.has(next)) {
        const cycle = visit(next);
        if (cycle) return cycle;
      }
    }
    stack.pop();
    state.set(node, 'done');
    return null;
  }
  for (const node of graph.keys()) {
    if (!state.has(node)) {
      const cycle = visit(node);
      if (cycle) return cycle;
    }
  }
  return null;
}

t.test('the cycle finder finds a planted cycle', async (t) => {
  const g = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a']],
    ['d', ['a']],
  ]);
  t.same(findCycle(g), ['a', 'b', 'c', 'a']);
  t.equal(
    findCycle(
      new Map([
        ['a', ['b']],
        ['b', []],
      ]),
    ),
    null,
  );
});

t.test('no import cycles in src/ and nodes/', async (t) => {
  const graph = new Map<string, string[]>();
  for (const file of sources) {
    graph.set(
      file,
      importsOf(file)
        .map((i) => i.target)
        .filter((x): x is string => x !== null),
    );
  }
  const cycle = findCycle(graph);
  t.same(
    (cycle ?? []).map((f) => relative(root, f)),
    [],
    'no cycle',
  );
});

t.test('nothing under src/ reads process.env', async (t) => {
  const readers = tsFiles(join(root, 'src'))
    .filter((f) => /process\.env\b/.test(readFileSync(f, 'utf8')))
    .map((f) => relative(root, f));
  t.same(readers, [], 'configuration enters through loadConfig(env) in nodes/*/main.ts');
});

t.test('the contract is pure: no I/O modules and no other parts', async (t) => {
  const offenders: string[] = [];
  for (const file of tsFiles(join(root, 'src/contract'))) {
    for (const { spec, target } of importsOf(file)) {
      const outside = target !== null && !target.startsWith(join(root, 'src/contract'));
      const io = /^node:(fs|net|http|https|child_process|dgram|dns|os|worker_threads)/.test(spec);
      if (outside || io) offenders.push(`${relative(root, file)} imports ${spec}`);
    }
  }
  t.same(offenders, []);
});

t.test('src/ holds the parts of the design and nothing else', async (t) => {
  const parts = readdirSync(join(root, 'src')).filter((n) =>
    statSync(join(root, 'src', n)).isDirectory(),
  );
  const known = [
    'agent',
    'api',
    'client',
    'config',
    'contract',
    'mesh',
    'objects',
    'queue',
    'sandbox',
    'store',
    'telemetry',
    'workbench',
  ];
  t.same(
    parts.filter((p) => !known.includes(p)),
    [],
  );
});
