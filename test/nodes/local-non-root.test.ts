import { spawn, spawnSync } from 'node:child_process';
import { chown, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { NodeProcess, nodeMain } from '../support/node-process.js';

/**
 * `npm start` by an ordinary user: the local node run as uid 65534 (with `setpriv`, as
 * root can) runs `exec` in bubblewrap inside an unprivileged user namespace, instead of
 * answering `no_sandbox`. What differs from the root setup is said in its log: no
 * per-command cgroups. Commands still see uid 10001; their files belong to the user.
 */

const USER = 65534;

// The user must be able to read the compiled node (a checkout under a private home,
// such as /root, is not readable by anyone else): then there is nothing to run.
const readable = spawnSync('setpriv', [
  `--reuid=${USER}`,
  `--regid=${USER}`,
  '--clear-groups',
  process.execPath,
  '-e',
  `require('fs').accessSync(${JSON.stringify(nodeMain('local'))}, require('fs').constants.R_OK)`,
]);
if (readable.status !== 0) {
  t.plan(
    0,
    `skip: uid ${USER} cannot read ${nodeMain('local')}: the checkout is private to its owner`,
  );
  process.exit(0);
}

const cwd = await mkdtemp(join(tmpdir(), 'memql-non-root-'));
t.teardown(() => rm(cwd, { recursive: true, force: true }));
await chown(cwd, USER, USER);

const child = spawn(
  'setpriv',
  [
    `--reuid=${USER}`,
    `--regid=${USER}`,
    '--clear-groups',
    process.execPath,
    '--enable-source-maps',
    nodeMain('local'),
  ],
  {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, MEMQL_HTTP_LISTEN: '127.0.0.1:0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  },
);
const node = new NodeProcess('local', child);
t.teardown(async () => {
  if (!node.alive) return;
  child.kill('SIGKILL');
  await node.exited;
});

t.test('an ordinary user runs exec in bwrap without cgroups', async (t) => {
  await node.waitFor(() => node.other.find((l) => l.startsWith('ready.')), 'the "ready." line');
  t.ok(
    node.other.some((l) => /sandbox: +bwrap/.test(l)),
    'the sandbox is bwrap, not none',
  );
  t.ok(
    node.lines.some((l) =>
      l.msg.startsWith('no per-command cgroups (the node does not run as root)'),
    ),
    'the log says what differs from root',
  );
  const api = /API: +(http:\/\/\S+?)\/v1/.exec(node.other.join('\n'))![1]!;
  const token = /token: +(\S+)/.exec(node.other.join('\n'))![1]!;
  const post = async (path: string, body: unknown) =>
    (await fetch(`${api}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.json())) as Record<string, unknown>;
  const runId = ((await post('/v1/runs', {})) as { run: { id: string } }).run.id;
  const result = (await post('/v1/dispatch', {
    action: 'exec',
    args: { command: 'id -u; echo hi > made.txt; cat made.txt' },
    runId,
    agentId: 'a',
    taskId: 't',
  })) as { ok: boolean; payload: { exitCode: number; stdout: string } };
  t.equal(result.ok, true, JSON.stringify(result));
  t.equal(result.payload.exitCode, 0);
  t.equal(result.payload.stdout, '10001\nhi\n', 'the command sees uid 10001');
  const made = await stat(join(cwd, '.data', 'workbenches', runId, 'made.txt'));
  t.equal(made.uid, USER, 'its file belongs to the user who runs the node');
  child.kill('SIGINT');
  t.equal((await node.exited).code, 0, 'Ctrl-C stops it cleanly');
});
