import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { WorkbenchClient } from '../../src/client/index.js';
import type { DispatchResult } from '../../src/contract/index.js';
import { createApiToken, listAuditEvents, openDb } from '../../src/store/index.js';
import { eventually } from '../support/mesh.js';
import { nodeMain, spawnNode } from '../support/node-process.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * The kill switch stops what already runs, with real processes: two agent nodes on one
 * Postgres (replicas of one Deployment), a worker host process connected to the first,
 * and an `exec` of about 25 s running on the worker through the first agent's API.
 * The user's kill switch is turned on through the other agent's API (the notice
 * crosses agent nodes through the database), then through the first one's for a
 * single worker: each time the call answers `kill_switch_engaged`, the command's
 * whole process group is gone, and its own marker shows it never reached its end.
 */

const database = await createTestDatabase();
t.teardown(() => database.drop());
const db = await openDb({ kind: 'postgres', url: database.url, maxConnections: 2 });
t.teardown(() => db.close());
const base = await mkdtemp(join(tmpdir(), 'memql-kill-switch-'));
t.teardown(() => rm(base, { recursive: true, force: true }));
const userRoot = join(base, 'home-files');
await mkdir(userRoot, { recursive: true });

const agentToken = (await createApiToken(db, 'alice')).token;
const personToken = (await createApiToken(db, 'alice', { kind: 'person' })).token;

async function startAgent(nodeId: string) {
  const agent = spawnNode(t, nodeId, nodeMain('agent'), {
    MEMQL_NODE_ID: nodeId,
    MEMQL_DATABASE_URL: database.url,
    MEMQL_GRPC_LISTEN: '127.0.0.1:0',
    MEMQL_HTTP_LISTEN: '127.0.0.1:0',
    MEMQL_WORKBENCH_ROOT: join(base, `${nodeId}-workbenches`),
    MEMQL_DATA_DIR: join(base, `${nodeId}-data`),
  });
  t.teardown(() => agent.stop());
  const ready = await agent.waitForLog((l) => l.msg === 'agent node ready', 60_000);
  return { process: agent, apiUrl: String(ready.apiUrl), grpcPort: Number(ready.grpcPort) };
}

const [agentA, agentB] = await Promise.all([startAgent('agent-a'), startAgent('agent-b')]);
const client = (url: string, token: string) => new WorkbenchClient({ baseUrl: url, token });

const worker = spawnNode(t, 'worker', nodeMain('worker'), {
  MEMQL_NODE_ID: 'desk',
  MEMQL_WORKER_AGENT: `127.0.0.1:${agentA.grpcPort}`,
  MEMQL_WORKER_TOKEN: agentToken,
  MEMQL_WORKER_ROOT: userRoot,
  MEMQL_WORKER_PROVIDES: 'user_files',
  MEMQL_DATA_DIR: join(base, 'worker-data'),
  MEMQL_LOG_FORMAT: 'json',
  HOME: base,
});
t.teardown(() => worker.stop());
await eventually(
  'the worker is connected to agent A',
  async () =>
    (await client(agentA.apiUrl, agentToken).workers.list()).workers[0]?.connected === true,
  120_000,
);
// The user grants the worker full scope, with their person token.
await client(agentA.apiUrl, personToken).workers.setScope('desk', 'full');
const run = await client(agentA.apiUrl, agentToken).createRun();

/** Whether `pid` is gone (no such process, or a zombie nobody reaped yet). */
function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return /^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return true;
  }
}

/**
 * Starts a ~25 s exec on the worker through agent A: a shell that records its pid, a
 * child `sleep 25` in its process group that records its own, and a marker the shell
 * writes only once the child finished. Resolves once both pids are on disk.
 */
async function startLongExec(tag: string) {
  const answer: Promise<DispatchResult> = client(agentA.apiUrl, agentToken).dispatch({
    action: 'exec',
    args: {
      command: `echo $$ > ${tag}.shell.pid; sleep 25 & echo $! > ${tag}.child.pid; wait; echo done > ${tag}.finished`,
      timeoutMs: 120_000,
    },
    runId: run.id,
    agentId: 'agent',
    taskId: 'task',
    callId: `long-${tag}`,
    environment: { needs: ['user_files'] },
  });
  const pidFile = (name: string) => join(userRoot, `${tag}.${name}.pid`);
  await eventually(
    'the command and its child are running',
    () => existsSync(pidFile('shell')) && existsSync(pidFile('child')),
    60_000,
  );
  const pids = [
    Number((await readFile(pidFile('shell'), 'utf8')).trim()),
    Number((await readFile(pidFile('child'), 'utf8')).trim()),
  ];
  t.ok(
    pids.every((pid) => pid > 0 && !gone(pid)),
    `the shell and its child run (${pids.join(', ')})`,
  );
  return { answer, pids, marker: join(userRoot, `${tag}.finished`) };
}

t.test('turned on through another agent node, it stops the running call', async (t) => {
  const { answer, pids, marker } = await startLongExec('all');
  const setAt = performance.now();
  const set = await client(agentB.apiUrl, agentToken).workers.setKillSwitch(true);
  t.equal(set.killSwitch.engaged, true, 'an agent token may turn it on');

  const result = await answer;
  // For the record only: nothing here depends on how fast it was.
  t.comment(`answered ${Math.round(performance.now() - setAt)} ms after the switch was turned on`);
  t.equal(result.ok, false, 'not an ok exec answer');
  t.equal(result.ok === false && result.errorCode, 'kill_switch_engaged');
  t.match((result as { payload: unknown }).payload, {
    reroutedFrom: 'workbench',
    workerIds: ['desk'],
    stopped: true,
    answer: { status: 'cancelled' },
  });
  t.notMatch(result.ok === false && result.message, /memql |\/v1\//, 'names no command');
  await eventually('the process group is gone', () => pids.every(gone), 30_000);
  t.notOk(existsSync(marker), 'the command never reached its end');

  const records = await client(agentA.apiUrl, agentToken).workers.listInvocations({
    runId: run.id,
  });
  t.match(records[0], { status: 'failed', errorCode: 'kill_switch_engaged' });
  const events = (await listAuditEvents(db, {})).filter(
    (e) => e.eventType === 'worker_kill_switch.set',
  );
  t.match(events.at(-1), { metadata: { engaged: true, workerId: null, tokenKind: 'agent' } });

  const again = await client(agentA.apiUrl, agentToken).dispatch({
    action: 'exec',
    args: { command: 'echo should-not-run > not-run.txt' },
    runId: run.id,
    agentId: 'agent',
    taskId: 'task',
    environment: { needs: ['user_files'] },
  });
  t.equal(again.ok === false && again.errorCode, 'kill_switch_engaged', 'while on, nothing runs');
  t.notOk(existsSync(join(userRoot, 'not-run.txt')));
});

t.test('one worker’s switch, turned on through the agent the worker is on', async (t) => {
  await client(agentA.apiUrl, personToken).workers.setKillSwitch(false);
  const { answer, pids, marker } = await startLongExec('one');
  const setAt = performance.now();
  await client(agentA.apiUrl, agentToken).workers.setKillSwitch(true, { workerId: 'desk' });
  const result = await answer;
  t.comment(`answered ${Math.round(performance.now() - setAt)} ms after the switch was turned on`);
  t.equal(result.ok === false && result.errorCode, 'kill_switch_engaged');
  t.match((result as { payload: unknown }).payload, { stopped: true, workerIds: ['desk'] });
  await eventually('the process group is gone', () => pids.every(gone), 30_000);
  t.notOk(existsSync(marker), 'the command never reached its end');
});
