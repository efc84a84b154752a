import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { WorkbenchClient } from '../../src/client/index.js';
import { captured, startAndStop } from '../support/local-node.js';
import { eventually } from '../support/mesh.js';
import { nodeMain } from '../support/node-process.js';

/**
 * `npm start` and worker hosts: with MEMQL_GRPC_LISTEN set, the local node takes
 * `memql worker` streams and reroutes calls the workbench cannot serve; the person
 * token it prints decides consent, and the kill switch turned on with the agent token
 * stops a call running on the worker (on PGlite, one process: no database notice, the
 * route's own node stops it). Without MEMQL_GRPC_LISTEN, such a call keeps its
 * environment_mismatch.
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

/** The person token the banner prints, in its console link and its CLI line. */
function personToken(stdout: string): string {
  const link = /sign in:\s+http:\/\/\S+\/console#token=(\S+)/.exec(stdout)?.[1];
  const cli = /your CLI:\s+export MEMQL_URL=\S+ MEMQL_TOKEN=(\S+)/.exec(stdout)?.[1];
  if (!link || link !== cli) throw new Error(`no person token in:\n${stdout}`);
  return link;
}

/** Whether `pid` is gone (no such process, or a zombie). */
function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return /^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return true;
  }
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
      const start = /worker hosts:\s+(MEMQL_WORKER_AGENT=(\S+) .* memql worker)$/m.exec(stdout);
      const agentAddress = start?.[2];
      t.ok(agentAddress, 'the banner says how to start a worker');
      t.match(
        start?.[1],
        `MEMQL_WORKER_TOKEN=${field(stdout, 'token')} MEMQL_WORKER_ROOT=$PWD`,
        'with all three variables it needs',
      );
      const client = new WorkbenchClient({
        baseUrl: field(stdout, 'API'),
        token: field(stdout, 'token'),
      });
      const person = new WorkbenchClient({
        baseUrl: field(stdout, 'API'),
        token: personToken(stdout),
      });
      t.match(personToken(stdout), /^mqp_/);
      t.match(field(stdout, 'token'), /^mqt_/);
      t.same(await person.me(), { userId: 'dev', tokenKind: 'person' });
      t.same(await client.me(), { userId: 'dev', tokenKind: 'agent' });
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
          async () => (await client.workers.list()).workers[0]?.connected === true,
          120_000,
        );
        const run = await client.createRun();
        const asked = await client.dispatch(readTodo(run.id));
        t.equal(asked.ok === false && asked.errorCode, 'consent_required');
        const card = (asked as { payload: { consentRequest: { id: string } } }).payload
          .consentRequest;
        await t.rejects(client.workers.approveConsentRequest(card.id), { code: 'person_required' });
        t.match(await person.workers.approveConsentRequest(card.id), { covers: true });
        const read = await client.dispatch(readTodo(run.id));
        t.match(read, {
          ok: true,
          payload: { content: 'water the plants\n' },
          routing: { reroutedFrom: 'workbench', workerId: 'laptop', scope: 'observe' },
        });

        // A ~25 s command on the worker, stopped by the kill switch the agent turns on.
        const long = {
          ...readTodo(run.id),
          action: 'exec',
          args: {
            command:
              'echo $$ > shell.pid; sleep 25 & echo $! > child.pid; wait; echo done > finished',
          },
        };
        const needsFull = await client.dispatch(long);
        t.equal(needsFull.ok === false && needsFull.errorCode, 'consent_required');
        await person.workers.approveConsentRequest(
          (needsFull as { payload: { consentRequest: { id: string } } }).payload.consentRequest.id,
        );
        const answer = client.dispatch(long);
        await eventually(
          'the command and its child run',
          () => existsSync(join(root, 'shell.pid')) && existsSync(join(root, 'child.pid')),
          60_000,
        );
        const pids = await Promise.all(
          ['shell.pid', 'child.pid'].map(async (f) =>
            Number((await readFile(join(root, f), 'utf8')).trim()),
          ),
        );
        await client.workers.setKillSwitch(true);
        const stopped = await answer;
        t.equal(stopped.ok === false && stopped.errorCode, 'kill_switch_engaged');
        t.match((stopped as { payload: unknown }).payload, { stopped: true });
        await eventually('the process group is gone', () => pids.every(gone), 30_000);
        t.notOk(existsSync(join(root, 'finished')), 'the command never reached its end');
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
