import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

/**
 * Structural rules of the code base, checked on the TypeScript sources: no import
 * cycles, nothing under src/ reads the process environment, the contract is pure,
 * src/ shows the parts of the design, every part (and every room of the workbench and
 * of the sandbox) is entered only through its door, and every door names what it
 * exports.
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
    'files',
    'mcp',
    'mesh',
    'objects',
    'queue',
    'sandbox',
    'store',
    'telemetry',
    'workbench',
    'worker',
  ];
  t.same(
    parts.filter((p) => !known.includes(p)),
    [],
  );
});

/** An import between two source files, as absolute paths. */
interface ImportEdge {
  from: string;
  to: string;
}

/**
 * Imports that go around a room's door: a file outside the room importing any file
 * inside it but its `index.ts`, or a file inside the room importing its own door (a
 * room's files import each other directly). `rooms` are absolute folder paths.
 */
function doorViolations(edges: readonly ImportEdge[], rooms: readonly string[]): string[] {
  const found: string[] = [];
  for (const { from, to } of edges) {
    for (const room of rooms) {
      const door = join(room, 'index.ts');
      const fromInside = from.startsWith(room + sep);
      const toInside = to.startsWith(room + sep);
      if (toInside && !fromInside && to !== door) {
        found.push(`${relative(root, from)} imports ${relative(root, to)}, not the door`);
      } else if (fromInside && from !== door && to === door) {
        found.push(`${relative(root, from)} imports its own room's door`);
      }
    }
  }
  return found;
}

const workbench = join(root, 'src/workbench');
/** The parts split into rooms, each room entered only through its `index.ts`. */
const partsWithRooms = ['workbench', 'sandbox'].map((name) => join(root, 'src', name));
const roomsOf = (part: string) =>
  readdirSync(part)
    .map((n) => join(part, n))
    .filter((p) => statSync(p).isDirectory());
const rooms = partsWithRooms.flatMap(roomsOf);

t.test('the door check finds imports that go around a door', async (t) => {
  const room = join(workbench, 'sync');
  const edges: ImportEdge[] = [
    { from: join(workbench, 'host.ts'), to: join(room, 'index.ts') },
    { from: join(room, 'scan.ts'), to: join(room, 'diff.ts') },
    { from: join(room, 'index.ts'), to: join(room, 'scan.ts') },
    { from: join(workbench, 'host.ts'), to: join(room, 'scan.ts') },
    { from: join(workbench, 'lifecycle/run-lifecycle.ts'), to: join(room, 'blobs.ts') },
    { from: join(root, 'src/api/views.ts'), to: join(room, 'workspace-sync.ts') },
    { from: join(room, 'scan.ts'), to: join(room, 'index.ts') },
  ];
  t.same(doorViolations(edges, [room]), [
    'src/workbench/host.ts imports src/workbench/sync/scan.ts, not the door',
    'src/workbench/lifecycle/run-lifecycle.ts imports src/workbench/sync/blobs.ts, not the door',
    'src/api/views.ts imports src/workbench/sync/workspace-sync.ts, not the door',
    "src/workbench/sync/scan.ts imports its own room's door",
  ]);
  // A folder whose name starts like the room's is not inside it.
  t.same(
    doorViolations(
      [{ from: join(workbench, 'host.ts'), to: join(workbench, 'syncx/a.ts') }],
      [room],
    ),
    [],
  );
});

/** Every part under src/: each has a door of its own. */
const parts = readdirSync(join(root, 'src'))
  .map((n) => join(root, 'src', n))
  .filter((p) => statSync(p).isDirectory());

/** Every import between two source files of src/ and nodes/. */
const edges: ImportEdge[] = sources.flatMap((from) =>
  importsOf(from)
    .map((i) => i.target)
    .filter((to): to is string => to !== null)
    .map((to) => ({ from, to })),
);

t.test(
  'every part under src/ has a door, and an import across parts goes through it',
  async (t) => {
    for (const part of parts) {
      t.ok(existsSync(join(part, 'index.ts')), `${relative(root, part)} has an index.ts`);
    }
    t.same(doorViolations(edges, parts), []);
  },
);

t.test('the door check holds the parts: a part entered around its door is found', async (t) => {
  const store = join(root, 'src/store');
  t.same(
    doorViolations(
      [
        { from: join(root, 'src/queue/command-queue.ts'), to: join(store, 'commands.ts') },
        { from: join(root, 'nodes/agent/main.ts'), to: join(root, 'src/agent/agent-node.ts') },
        { from: join(root, 'src/queue/command-queue.ts'), to: join(store, 'index.ts') },
        { from: join(store, 'runs.ts'), to: join(store, 'db.ts') },
      ],
      parts,
    ),
    [
      'src/queue/command-queue.ts imports src/store/commands.ts, not the door',
      'nodes/agent/main.ts imports src/agent/agent-node.ts, not the door',
    ],
  );
});

/** `export *` and `export type *` lines of a door: a door names what it exports. */
function starExports(text: string): string[] {
  return [...text.matchAll(/^export\s+(?:type\s+)?\*\s+from\s+['"]([^'"]+)['"]/gm)].map(
    (m) => m[0],
  );
}

t.test('the star finder finds both forms', async (t) => {
  t.same(
    starExports(
      "export * from './a.js';\nexport type * from './b.js';\nexport { c } from './c.js';\n",
    ),
    ["export * from './a.js'", "export type * from './b.js'"],
  );
});

t.test('every door names its exports', async (t) => {
  const doors = [...parts, ...rooms].map((p) => join(p, 'index.ts')).filter((d) => existsSync(d));
  const stars = doors.flatMap((d) =>
    starExports(readFileSync(d, 'utf8')).map((line) => `${relative(root, d)}: ${line}`),
  );
  t.same(stars, []);
});

/** Whether a door opens with a doc comment that holds a TypeScript example. */
function opensWithExample(text: string): boolean {
  const head = /^\/\*\*([\s\S]*?)\*\//.exec(text.trimStart());
  return head !== null && /```ts\n[\s\S]+?```/.test(head[1]!);
}

t.test('the example finder needs a leading doc comment with a ts block', async (t) => {
  t.ok(opensWithExample('/**\n * A part.\n *\n * ```ts\n * go();\n * ```\n */\nexport {};'));
  t.notOk(opensWithExample('// A part.\nexport {};'));
  t.notOk(opensWithExample('/**\n * A part.\n */\nexport {};\n/** ```ts\n go();\n``` */'));
});

t.test("every part's door opens with what it is for and an example", async (t) => {
  const bare = parts
    .map((p) => join(p, 'index.ts'))
    .filter((d) => existsSync(d) && !opensWithExample(readFileSync(d, 'utf8')))
    .map((d) => relative(root, d));
  t.same(bare, []);
});

t.test(
  "the workbench's and the sandbox's rooms are entered only through their index.ts",
  async (t) => {
    for (const part of partsWithRooms)
      t.ok(roomsOf(part).length > 0, `${relative(root, part)} has rooms`);
    for (const room of rooms) {
      t.ok(existsSync(join(room, 'index.ts')), `${relative(root, room)} has an index.ts`);
    }
    t.same(doorViolations(edges, rooms), []);
  },
);
