import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { WorkbenchClient } from '../../src/client/index.js';
import { captured, startAndStop } from '../support/local-node.js';
import { eventually } from '../support/mesh.js';
import { nodeMain } from '../support/node-process.js';

/**
 * `npm start` and worker hosts: with MEMQL_GRPC_LISTEN set, the local node takes
 * `memql worker` streams and reroutes calls the workbench cannot serve; without it,
 * such a call keeps its environment_mismatch.
 */

const base = await mkdtemp(join(tmpdir(), 'memql-local-workers-'));
t.teardown(() => rm(base, { recursive: true, force: true }));
const root = join(base, 'my-files');
await mkdir(root);
await writeFile(join(root, 'todo.txt'), 'water the plants\n');

function field(stdout: string, name: string): string {
  const m = new RegExp(`${name}:\\s+(\\S+)`).exec(stdout);
  if (!m?.[1]) throw new Error(`no ${name} in:\n${stdout}`);
  return m[1];
}

const readTodo = (runId: string) => ({
  action: 'fs_read',
  args: { path: 'todo.txt' },
  runId,
  agentId: 'a',
  taskId: 't',
  environment: { needs: ['user_files'] },
});

t.test('with MEMQL_GRPC_LISTEN: a worker connects and takes the call', async (t) => {
  const dataDir = join(base, 'data-with');
  const result = await startAndStop(
    base,
    { MEMQL_DATA_DIR: dataDir, MEMQL_GRPC_LISTEN: '127.0.0.1:0', MEMQL_RUNNER: 'process' },
    async (stdout) => {
      const agentAddress = /MEMQL_WORKER_AGENT=(\S+) memql worker/.exec(stdout)?.[1];
      t.ok(agentAddress, 'the banner says how to start a worker');
      const client = new WorkbenchClient({
        baseUrl: field(stdout, 'API'),
        token: field(stdout, 'token'),
      });
      const worker = spawn(process.execPath, [nodeMain('worker')], {
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          MEMQL_NODE_ID: 'laptop',
          MEMQL_WORKER_AGENT: agentAddress ?? '',
          MEMQL_WORKER_TOKEN: field(stdout, 'token'),
          MEMQL_WORKER_ROOT: root,
          MEMQL_WORKER_PROVIDES: 'user_files',
          MEMQL_DATA_DIR: join(base, 'worker-data'),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const out = captured(worker);
      const exited = new Promise((r) => worker.on('exit', r));
      try {
        await eventually(
          'the worker is connected',
          async () => (await client.listWorkers()).workers[0]?.connected === true,
          120_000,
        );
        const run = await client.createRun();
        const asked = await client.dispatch(readTodo(run.id));
        t.equal(asked.ok === false && asked.errorCode, 'consent_required');
        const card = (asked as { payload: { consentRequest: { id: string } } }).payload
          .consentRequest;
        t.match(await client.approveConsentRequest(card.id), { covers: true });
        const read = await client.dispatch(readTodo(run.id));
        t.match(read, {
          ok: true,
          payload: { content: 'water the plants\n' },
          routing: { reroutedFrom: 'workbench', workerId: 'laptop', scope: 'observe' },
        });
      } finally {
        worker.kill('SIGTERM');
        await exited;
      }
      t.equal(worker.exitCode, 0, `the worker stops cleanly: ${out.stderr}`);
    },
  );
  t.ok(result.ready, result.stderr);
  t.equal(result.code, 0);
});

t.test('without it: no worker listener, the mismatch stands', async (t) => {
  const dataDir = join(base, 'data-without');
  const result = await startAndStop(
    base,
    { MEMQL_DATA_DIR: dataDir, MEMQL_RUNNER: 'process' },
    async (stdout) => {
      t.notMatch(stdout, /worker hosts:/);
      const client = new WorkbenchClient({
        baseUrl: field(stdout, 'API'),
        token: field(stdout, 'token'),
      });
      const run = await client.createRun();
      const result = await client.dispatch(readTodo(run.id));
      t.equal(result.ok === false && result.errorCode, 'environment_mismatch');
    },
  );
  t.ok(result.ready, result.stderr);
});
