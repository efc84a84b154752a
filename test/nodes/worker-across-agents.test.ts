import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { WorkbenchClient } from '../../src/client/index.js';
import type { DispatchResult } from '../../src/contract/index.js';
import {
  createApiToken,
  listAuditEvents,
  listConsentRequests,
  listWorkerHosts,
  listWorkerInvocations,
  openDb,
  type WorkerInvocation,
} from '../../src/store/index.js';
import { eventually, openRawStream } from '../support/mesh.js';
import { type NodeProcess, nodeMain, spawnNode } from '../support/node-process.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * Agent replicas are peers for worker hosts, with real processes: two agent nodes on
 * one Postgres sharing a mesh token, and a worker host process connected to one of
 * them. A call arriving at the other agent runs on the worker, forwarded over the
 * mesh to the agent holding its stream, with the consent gate decided once, on the
 * arriving agent (its log, the routing record's `decidedBy`; the holder logs only the
 * forward). The holder takes no forwarded call on a caller's token. Streaming output,
 * a cancel, a caller that goes away, the worker lost mid-call, a worker connected
 * nowhere, the worker reconnecting to the other agent, and the holding agent dying
 * mid-call each end in a typed answer.
 */

const MESH_TOKEN = 'mesh-token-for-peer-agents-0123456789';
const database = await createTestDatabase();
t.teardown(() => database.drop());
const db = await openDb({ kind: 'postgres', url: database.url, maxConnections: 2 });
t.teardown(() => db.close());
const base = await mkdtemp(join(tmpdir(), 'memql-across-agents-'));
t.teardown(() => rm(base, { recursive: true, force: true }));
const userRoot = join(base, 'home-files');
await mkdir(userRoot, { recursive: true });

const agentToken = (await createApiToken(db, 'alice')).token;
const personToken = (await createApiToken(db, 'alice', { kind: 'person' })).token;

interface Agent {
  readonly process: NodeProcess;
  readonly apiUrl: string;
  readonly grpcPort: number;
}

async function startAgent(nodeId: string): Promise<Agent> {
  const agent = spawnNode(t, nodeId, nodeMain('agent'), {
    MEMQL_NODE_ID: nodeId,
    MEMQL_DATABASE_URL: database.url,
    MEMQL_GRPC_LISTEN: '127.0.0.1:0',
    MEMQL_HTTP_LISTEN: '127.0.0.1:0',
    MEMQL_MESH_TOKEN: MESH_TOKEN,
    MEMQL_WORKBENCH_ROOT: join(base, `${nodeId}-workbenches`),
    MEMQL_DATA_DIR: join(base, `${nodeId}-data`),
  });
  t.teardown(() => agent.stop());
  const ready = await agent.waitForLog((l) => l.msg === 'agent node ready', 60_000);
  return { process: agent, apiUrl: String(ready.apiUrl), grpcPort: Number(ready.grpcPort) };
}

function startWorker(agent: Agent, name: string): NodeProcess {
  const worker = spawnNode(t, name, nodeMain('worker'), {
    MEMQL_NODE_ID: 'desk',
    MEMQL_WORKER_AGENT: `127.0.0.1:${agent.grpcPort}`,
    MEMQL_WORKER_TOKEN: agentToken,
    MEMQL_WORKER_ROOT: userRoot,
    MEMQL_WORKER_PROVIDES: 'user_files',
    MEMQL_DATA_DIR: join(base, `${name}-data`),
    MEMQL_LOG_FORMAT: 'json',
    HOME: base,
  });
  t.teardown(() => worker.stop());
  return worker;
}

const [agentA, agentB] = await Promise.all([startAgent('agent-a'), startAgent('agent-b')]);
const client = (agent: Agent, token = agentToken) =>
  new WorkbenchClient({ baseUrl: agent.apiUrl, token });
const logged = (agent: Agent, msg: string, from = 0) =>
  agent.process.lines.slice(from).filter((l) => l.msg === msg);
const FORWARD_SERVED = 'forwarded worker call: passed down the worker stream held here';
/** The lines `msg` of `agent`, once one has arrived (its stdout may trail its answers). */
const loggedOnce = async (agent: Agent, msg: string) => {
  await agent.process.waitForLog((l) => l.msg === msg);
  return logged(agent, msg);
};

let worker = startWorker(agentB, 'worker-1');
await eventually(
  'the worker is connected to agent B',
  async () => (await client(agentB).workers.list()).workers[0]?.connected === true,
  120_000,
);
const run = await client(agentA).createRun();

let calls = 0;
/** One call for the worker's `user_files`, arriving at `agent`. */
function call(agent: Agent, action: string, args: Record<string, unknown>, extra = {}) {
  calls += 1;
  return client(agent).dispatch(
    {
      action,
      args,
      runId: run.id,
      agentId: 'agent',
      taskId: 'task',
      callId: `call-${calls}`,
      environment: { needs: ['user_files'] },
    },
    extra,
  );
}

const newest = async (): Promise<WorkerInvocation> => {
  const [row] = await listWorkerInvocations(db, 'alice', { runId: run.id, limit: 1 });
  if (!row) throw new Error('no routing record');
  return row;
};
const settled = async (id: string) => {
  let row: WorkerInvocation | undefined;
  await eventually('the routing record is closed', async () => {
    row = (await listWorkerInvocations(db, 'alice', { runId: run.id })).find((r) => r.id === id);
    return row !== undefined && row.status !== 'running';
  });
  return row as WorkerInvocation;
};

t.test('consent missing: consent_required, decided on the arriving agent only', async (t) => {
  const result = await call(agentA, 'fs_write', { path: 'note.txt', content: 'from A' });
  t.equal(result.ok === false && result.errorCode, 'consent_required');
  t.match((result as { payload: unknown }).payload, {
    reroutedFrom: 'workbench',
    consentRequest: { workerId: 'desk', requiredScope: 'full', heldScope: 'none' },
  });
  t.equal(
    (await loggedOnce(agentA, 'reroute: consent required')).length,
    1,
    'the gate ran on agent A',
  );
  t.equal(logged(agentB, 'reroute: consent required').length, 0, 'and not on agent B');
  t.equal((await listConsentRequests(db, 'alice', { status: 'pending' })).length, 1);
  t.notOk(existsSync(join(userRoot, 'note.txt')), 'nothing reached the worker');
  t.same(await listWorkerInvocations(db, 'alice'), [], 'nothing was sent');
});

t.test('approved with a person credential, the call at A runs on the worker at B', async (t) => {
  const [request] = await client(agentA).workers.listConsentRequests();
  const approved = await client(agentA, personToken).workers.approveConsentRequest(
    String(request?.id),
  );
  t.equal(approved.covers, true);
  const result = await call(agentA, 'fs_write', { path: 'note.txt', content: 'from A' });
  t.match(result, {
    ok: true,
    routing: { target: 'worker', reroutedFrom: 'workbench', workerId: 'desk', scope: 'full' },
  });
  t.equal(await readFile(join(userRoot, 'note.txt'), 'utf8'), 'from A', 'written by the worker');
  const row = await newest();
  t.match(row, {
    workerId: 'desk',
    reroutedFrom: 'workbench',
    status: 'succeeded',
    decidedBy: 'agent-a',
    linkNodeId: 'agent-b',
  });
  t.equal(
    (result as { routing: { invocationId: string } }).routing.invocationId,
    row.id,
    'the answer names the record',
  );
  t.equal((await loggedOnce(agentA, 'rerouted to a worker host')).length, 1, 'one gate, on A');
  // B logs the forward before passing it on, so a gate of its own would be logged by now.
  t.equal((await loggedOnce(agentB, FORWARD_SERVED)).length, 1, 'B only passed it on');
  t.equal(logged(agentB, 'rerouted to a worker host').length, 0, 'no gate on B');
  t.equal(logged(agentB, 'reroute: consent required').length, 0);
  const approvals = (await listAuditEvents(db, {})).filter(
    (e) => e.eventType === 'worker_consent.approved',
  );
  t.equal(approvals.length, 1, 'one consent decision, by the person');
  const seen = await client(agentA).workers.list();
  t.match(seen.workers, [{ workerId: 'desk', connected: true }], 'A lists it as reachable');
});

t.test('exec output streams across both agents as it comes', async (t) => {
  const chunks: string[] = [];
  const answer = client(agentA).dispatchStream(
    {
      action: 'exec',
      args: { command: 'echo first; while [ ! -f go ]; do sleep 0.05; done; echo second' },
      runId: run.id,
      agentId: 'agent',
      taskId: 'task',
      environment: { needs: ['user_files'] },
    },
    { onOutput: (_stream, chunk) => chunks.push(chunk.toString()) },
  );
  await eventually('the first line arrived before the end', () =>
    chunks.join('').includes('first'),
  );
  await writeFile(join(userRoot, 'go'), '');
  const result = await answer;
  t.match(result, { ok: true, payload: { status: 'completed', exitCode: 0 } });
  t.match(chunks.join(''), /first\n.*second/s);
  await rm(join(userRoot, 'go'));
});

t.test('agent B takes no forwarded call on a caller token', async (t) => {
  const forge = (token: string) => {
    const stream = openRawStream(`127.0.0.1:${agentB.grpcPort}`, token);
    t.teardown(() => stream.close());
    const envelope = {
      action: 'fs_write',
      args: { path: 'forged.txt', content: 'x' },
      runId: run.id,
      agentId: 'agent',
      taskId: 'task',
    };
    stream.send({
      kind: 'request',
      id: 'f1',
      method: 'worker.forward',
      authority: { class: 'user', subject: 'user:alice' },
      payload: Buffer.from(
        JSON.stringify({
          workerId: 'desk',
          payload: Buffer.from(JSON.stringify(envelope)).toString('base64'),
        }),
      ),
    });
    return stream;
  };
  const from = agentB.process.lines.length;
  forge(agentToken);
  await agentB.process.waitForLog(
    (l) => l.msg === 'unexpected frame from a worker ignored',
    30_000,
    from,
  );
  t.pass("the caller's agent token makes a worker stream, where a request is ignored");
  t.equal((await forge(personToken).ended).code, 16, 'a person token: UNAUTHENTICATED');
  const wrong = forge('not-the-mesh-token-at-all-0123456789');
  t.equal((await wrong.ended).code, 16, 'an unknown token: UNAUTHENTICATED');
  t.notOk(existsSync(join(userRoot, 'forged.txt')), 'nothing reached the worker');
  t.equal(logged(agentB, FORWARD_SERVED, from).length, 0, 'no forward was served');
});

/** Pids a long command on the worker wrote (`<tag>.shell.pid`, `<tag>.child.pid`). */
async function longExec(agent: Agent, tag: string, extra = {}) {
  const answer: Promise<DispatchResult> = call(
    agent,
    'exec',
    {
      command: `echo $$ > ${tag}.shell.pid; sleep 25 & echo $! > ${tag}.child.pid; wait; echo done > ${tag}.finished`,
      timeoutMs: 120_000,
    },
    extra,
  );
  const pidFile = (name: string) => join(userRoot, `${tag}.${name}.pid`);
  let early: DispatchResult | undefined;
  answer.then(
    (r) => {
      early = r;
    },
    () => {},
  );
  await eventually(
    'the command and its child are running',
    () => {
      if (early !== undefined) throw new Error(`answered first: ${JSON.stringify(early)}`);
      return existsSync(pidFile('shell')) && existsSync(pidFile('child'));
    },
    60_000,
  );
  const pids = [
    Number((await readFile(pidFile('shell'), 'utf8')).trim()),
    Number((await readFile(pidFile('child'), 'utf8')).trim()),
  ];
  return { answer, pids, marker: join(userRoot, `${tag}.finished`) };
}

function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return /^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return true;
  }
}
function killLeft(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

t.test('a cancel (the caller leaving with cancelOnDisconnect) reaches the worker', async (t) => {
  const controller = new AbortController();
  const { answer, pids, marker } = await longExec(agentA, 'cancel', {
    signal: controller.signal,
    cancelOnDisconnect: true,
  });
  const row = await newest();
  controller.abort();
  await t.rejects(answer, 'the caller gave up its wait');
  await eventually('the process group is gone', () => pids.every(gone), 60_000);
  t.notOk(existsSync(marker), 'the command never reached its end');
  t.match(await settled(row.id), { status: 'succeeded', linkNodeId: 'agent-b' });
});

t.test('a caller that goes away leaves the call running; its outcome is recorded', async (t) => {
  const controller = new AbortController();
  const answer = call(
    agentA,
    'exec',
    { command: 'while [ ! -f go ]; do sleep 0.05; done; echo kept > kept.txt' },
    { signal: controller.signal },
  );
  await eventually('the call reached the worker', async () => {
    const [row] = await listWorkerInvocations(db, 'alice', { runId: run.id, limit: 1 });
    return row?.status === 'running';
  });
  const row = await newest();
  controller.abort();
  await t.rejects(answer);
  await writeFile(join(userRoot, 'go'), '');
  t.match(await settled(row.id), { status: 'succeeded' }, 'the worker answered, and it counts');
  t.equal(await readFile(join(userRoot, 'kept.txt'), 'utf8'), 'kept\n');
  await rm(join(userRoot, 'go'));
});

t.test('the kill switch, turned on at A, stops a call running through B', async (t) => {
  const { answer, pids, marker } = await longExec(agentA, 'kill');
  await client(agentA).workers.setKillSwitch(true);
  const result = await answer;
  t.equal(result.ok === false && result.errorCode, 'kill_switch_engaged');
  t.match((result as { payload: unknown }).payload, { stopped: true, workerIds: ['desk'] });
  await eventually('the process group is gone', () => pids.every(gone), 60_000);
  t.notOk(existsSync(marker));
  await client(agentA, personToken).workers.setKillSwitch(false);
});

t.test('the worker lost mid-call: unavailable, recorded lost', async (t) => {
  const { answer, pids } = await longExec(agentA, 'lost');
  await worker.stop('SIGKILL');
  const result = await answer;
  killLeft(pids);
  t.equal(result.ok === false && result.errorCode, 'unavailable');
  t.match(await newest(), { status: 'lost', errorCode: 'unavailable', linkNodeId: 'agent-b' });
});

t.test('a worker connected nowhere: worker_unavailable at either agent', async (t) => {
  await eventually(
    'agent B recorded the disconnection',
    async () => (await listWorkerHosts(db, 'alice'))[0]?.disconnectedAt !== null,
    60_000,
  );
  for (const agent of [agentA, agentB]) {
    const result = await call(agent, 'fs_read', { path: 'note.txt' });
    t.equal(result.ok === false && result.errorCode, 'worker_unavailable');
    t.match((result as { payload: unknown }).payload, {
      reroutedFrom: 'workbench',
      workers: [{ workerId: 'desk', connected: false }],
    });
  }
});

t.test('the worker reconnects to A: a call at B finds it there', async (t) => {
  worker = startWorker(agentA, 'worker-2');
  await eventually(
    'the worker is connected to agent A',
    async () => (await client(agentB).workers.list()).workers[0]?.connected === true,
    120_000,
  );
  const result = await call(agentB, 'fs_read', { path: 'note.txt' });
  t.match(result, { ok: true, payload: { content: 'from A' }, routing: { workerId: 'desk' } });
  t.match(await newest(), { status: 'succeeded', decidedBy: 'agent-b', linkNodeId: 'agent-a' });
});

t.test('the agent holding the worker dies mid-call: unavailable, recorded lost', async (t) => {
  const { answer, pids } = await longExec(agentB, 'holder');
  await agentA.process.stop('SIGKILL');
  const result = await answer;
  t.equal(result.ok === false && result.errorCode, 'unavailable');
  t.match(await newest(), { status: 'lost', decidedBy: 'agent-b', linkNodeId: 'agent-a' });
  await worker.stop('SIGTERM');
  killLeft(pids);
});
