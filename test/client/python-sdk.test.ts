import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { WorkbenchClient } from '../../src/client/index.js';
import {
  actionArgsJsonSchema,
  ERROR_CODE_LIST,
  ERROR_CODES,
  TOOL_ACTION_NAMES,
} from '../../src/contract/index.js';
import { finished, servingLocalNode } from '../support/local-node.js';
import { stalePythonSdkFiles } from '../support/python-sdk-files.js';
import { codeBlocks, docSection } from '../support/readme.js';

/**
 * The Python SDK (`clients/python`), from the virtualenv
 * `scripts/setup/install-python-sdk.sh` makes: its generated files are what the contract
 * makes now, it knows every error code as its category's class and every action's
 * arguments as the schemas name them, ruff and `mypy --strict` pass on it and its tests, and
 * its pytest suite passes against a real local node (as `npm start` runs it, on a
 * temporary data directory, the bwrap runner). The SDK is imported from this checkout
 * (`PYTHONPATH`), whichever checkout the virtualenv's editable install points at.
 */

t.setTimeout(900_000);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const SDK = resolve(ROOT, 'clients/python');
const VENV = process.env.MEMQL_PYTHON_SDK_VENV ?? '/opt/memql-python-sdk';
const PATH = process.env.PATH ?? '/usr/bin:/bin';

for (const tool of ['python', 'pytest', 'mypy', 'ruff']) {
  if (!existsSync(join(VENV, 'bin', tool))) {
    throw new Error(
      `no ${tool} in the Python SDK's virtualenv ${VENV}: run "bash scripts/setup/install-python-sdk.sh" (or set MEMQL_PYTHON_SDK_VENV to a virtualenv it made)`,
    );
  }
}

const scratch = await mkdtemp(join(tmpdir(), 'memql-python-sdk-'));
t.teardown(() => rm(scratch, { recursive: true, force: true }));
const pythonEnv = {
  PATH,
  HOME: scratch,
  PYTHONPATH: join(SDK, 'src'),
  PYTHONDONTWRITEBYTECODE: '1',
  MYPY_CACHE_DIR: join(scratch, 'mypy-cache'),
};

/** Runs a tool of the virtualenv in the SDK's directory, to its end. */
function venv(tool: string, args: string[], env: Record<string, string> = {}) {
  return finished(
    spawn(join(VENV, 'bin', tool), args, {
      cwd: SDK,
      env: { ...pythonEnv, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

// A local node as `npm start` runs it, on a data directory of its own.
const { node, banner } = await servingLocalNode(t, 'memql-python-node-');
const { baseUrl: url, token, personToken: person } = banner;
if (!person) throw new Error('the local node printed no person token');
const nodeEnv = { MEMQL_URL: url, MEMQL_TOKEN: token, MEMQL_PERSON_TOKEN: person };
const client = new WorkbenchClient({ baseUrl: url, token });

t.test("the SDK's generated files are what the contract makes now", async (t) => {
  t.same(
    stalePythonSdkFiles(),
    [],
    'regenerate them: npm run build, then node dist/test/support/python-sdk-files.js --write',
  );
});

t.test("the SDK knows the contract's codes and action arguments", async (t) => {
  const script = [
    'import json, memql_workbench as m',
    'from memql_workbench.args import ACTION_ARGS',
    'print(json.dumps({',
    '  "file": m.__file__,',
    '  "codes": {c: [m.error_class(c).__name__, m.error_class(c).category] for c in m.ERROR_CODES},',
    '  "actions": list(m.TOOL_ACTION_NAMES),',
    '  "args": {a: {"required": sorted(t.__required_keys__), "all": sorted(t.__required_keys__ | t.__optional_keys__)} for a, t in ACTION_ARGS.items()},',
    '}))',
  ].join('\n');
  const { code, stdout, stderr } = await venv('python', ['-c', script]);
  t.equal(code, 0, stderr);
  const seen = JSON.parse(stdout) as {
    file: string;
    codes: Record<string, [string, string]>;
    actions: string[];
    args: Record<string, { required: string[]; all: string[] }>;
  };
  t.equal(seen.file, join(SDK, 'src/memql_workbench/__init__.py'), 'the SDK of this checkout');
  const classOf = {
    caller: 'CallerError',
    policy: 'PolicyError',
    environment: 'WorkbenchEnvironmentError',
    dependency: 'DependencyError',
    internal: 'InternalError',
  } as const;
  t.same(Object.keys(seen.codes), [...ERROR_CODE_LIST], 'every code, in the contract order');
  for (const code of ERROR_CODE_LIST) {
    const { category } = ERROR_CODES[code];
    t.same(seen.codes[code], [classOf[category], category], `${code} is a ${classOf[category]}`);
  }
  t.same(seen.actions, [...TOOL_ACTION_NAMES], 'every tool action, and not build');
  for (const action of TOOL_ACTION_NAMES) {
    const schema = actionArgsJsonSchema(action) as {
      properties?: Record<string, unknown>;
      required?: string[];
    };
    t.same(
      seen.args[action],
      {
        required: [...(schema.required ?? [])].sort(),
        all: Object.keys(schema.properties ?? {}).sort(),
      },
      `${action}'s args are the schema's`,
    );
  }
});

t.test('ruff finds nothing to fix or format in the package and its tests', async (t) => {
  const lint = await venv('ruff', ['check', '--no-cache', '.']);
  t.equal(lint.code, 0, `${lint.stdout}${lint.stderr}`);
  const format = await venv('ruff', ['format', '--no-cache', '--check', '.']);
  t.equal(format.code, 0, `${format.stdout}${format.stderr}`);
});

t.test('mypy --strict passes on the package and its tests', async (t) => {
  const { code, stdout, stderr } = await venv('mypy', ['--strict']);
  t.equal(code, 0, `${stdout}${stderr}`);
  const files = Number(/^Success: no issues found in (\d+) source files$/m.exec(stdout)?.[1]);
  t.ok(files >= 30, `mypy --strict: no issues in ${files} source files`);
});

t.test('the pytest suite passes against the node', async (t) => {
  const listed = await venv('pytest', ['--collect-only', '-q'], nodeEnv);
  t.equal(listed.code, 0, `pytest collects the suite ${listed.stderr}`);
  const collected = Number(/^(\d+) tests? collected/m.exec(listed.stdout)?.[1]);
  t.ok(collected >= 50, `${collected} tests collected`);

  const run = await venv('pytest', ['-q', '-rfE'], nodeEnv);
  const summary = run.stdout.trim().split('\n').at(-1) ?? '';
  const count = (what: string) => Number(new RegExp(`(\\d+) ${what}`).exec(summary)?.[1] ?? 0);
  t.equal(run.code, 0, `pytest exits 0 (${summary})\n${run.stdout.slice(-6000)}${run.stderr}`);
  t.equal(count('passed'), collected, `pytest: ${count('passed')} of ${collected} passed`);
  t.equal(count('failed'), 0, 'none failed');
  t.equal(count('errors?'), 0, 'no errors');
  t.equal(count('skipped'), 0, 'none skipped');
  t.same((await client.listRuns({ status: 'running' })).runs, [], 'the tests ended every run');
});

/** Runs a python block of docs/python.md as a file of its own, as a reader would. */
async function runDocBlock(section: string, find: (block: string) => boolean) {
  const block = codeBlocks(docSection('python.md', section), 'python').find(find);
  if (block === undefined) throw new Error(`no such python block in "${section}"`);
  const file = join(scratch, `${section.replace(/\W+/g, '-')}.py`);
  await writeFile(file, block);
  return venv('python', [file], { MEMQL_URL: url!, MEMQL_TOKEN: token! });
}

t.test('the tool loop of docs/python.md runs against the node', async (t) => {
  const { code, stdout, stderr } = await runDocBlock('Tool loop', (b) => b.includes('model_turn'));
  t.equal(code, 0, `the block runs cleanly ${stderr}`);
  t.equal(
    stdout,
    [
      'call_1 fs_write ok',
      'call_2 exec ok',
      'call_3 fs_read path_not_found',
      'call_4 promote_artifact ok',
      'artifacts: report.md',
      '',
    ].join('\n'),
    'the model is told of path_not_found, and carries on',
  );
});

t.test('the async example of docs/python.md runs against the node', async (t) => {
  const { code, stdout, stderr } = await runDocBlock('The clients', (b) =>
    b.includes('asyncio.run'),
  );
  t.equal(code, 0, `the block runs cleanly ${stderr}`);
  t.equal(stdout, "['run 0', 'run 1', 'run 2']\n", 'three runs, each command in its own');
});

t.test('the node stops cleanly', async (t) => {
  for (const line of node.lines.filter((l) => l.level >= 50)) t.comment(JSON.stringify(line));
  t.equal((await node.stop('SIGINT', 30_000)).code, 0, 'the node exits 0 on SIGINT');
});
