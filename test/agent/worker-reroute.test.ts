import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import { startAgentNode } from '../../src/agent/agent-node.js';
import { loadConfig } from '../../src/config/index.js';
import {
  type DispatchResult,
  errorResult,
  type Need,
  userAuthority,
} from '../../src/contract/index.js';
import type { DispatchTarget } from '../../src/mesh/dispatch-target.js';
import type { RequestFrame } from '../../src/mesh/frames.js';
import {
  ALL_WORKERS,
  createApiToken,
  decideConsentRequest,
  listConsentRequests,
  listWorkerHosts,
  listWorkerInvocations,
  openDb,
  setKillSwitch,
  setWorkerScope,
} from '../../src/store/index.js';
import { parsedEnvelope } from '../support/envelope.js';
import { eventually, openRawStream, type RawStream } from '../support/mesh.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * The reroute through the agent node as built (hub on its gRPC listener, the gate, the
 * store on a real Postgres): each outcome of the gate, decided before any frame reaches
 * a worker. The worker is a raw stream answering what it is sent; the worker binary
 * and the whole path through the HTTP API have their own tests.
 */

const log = pino({ level: 'silent' });
const alice = userAuthority('user:alice');
const bob = userAuthority('user:bob');

t.test('reroute outcomes', async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const db = await openDb({ kind: 'postgres', url: database.url, maxConnections: 4 });
  t.teardown(() => db.close());
  const base = await mkdtemp(join(tmpdir(), 'memql-reroute-'));
  t.teardown(() => rm(base, { recursive: true, force: true }));
  let localCalls = 0;
  const local: DispatchTarget = {
    async handleDispatch(): Promise<DispatchResult> {
      localCalls += 1;
      return errorResult('internal', 'the workbench must not see rerouted calls');
    },
  };
  const config = loadConfig({
    MEMQL_NODE_ID: 'agent-1',
    MEMQL_DATABASE_URL: database.url,
    MEMQL_WORKBENCH_ROOT: join(base, 'wb'),
    MEMQL_DATA_DIR: join(base, 'data'),
    MEMQL_GRPC_LISTEN: '127.0.0.1:0',
    MEMQL_RUNNER: 'process',
  });
  const node = await startAgentNode({
    config,
    log,
    local,
    readAffinity: async () => null,
    version: 'test',
    db,
  });
  t.teardown(() => node.close());
  const target = `127.0.0.1:${node.grpcAddress?.port}`;
  const aliceToken = (await createApiToken(db, 'alice')).token;

  // A worker of alice's that answers every call with what it was sent.
  function connectWorker(workerId: string, provides: Need[]): RawStream {
    const stream = openRawStream(target, aliceToken);
    t.teardown(() => stream.close());
    stream.send({
      kind: 'hello',
      nodeId: workerId,
      nodeType: 'worker',
      version: 'w',
      worker: { os: 'linux', provides, capacity: 2 },
    });
    // Health every 500 ms, as a worker sends it: a silent worker is not offered.
    const health = setInterval(
      () => stream.send({ kind: 'health', healthy: true, running: 0, queued: 0, capacity: 2 }),
      500,
    );
    stream.call.on('close', () => clearInterval(health));
    t.teardown(() => clearInterval(health));
    stream.call.on('data', () => {
      for (const f of stream.frames.splice(0)) {
        if (f.kind !== 'request') continue;
        const sent = JSON.parse(f.payload.toString());
        stream.send({
          kind: 'response',
          id: f.id,
          ok: true,
          errorCode: '',
          message: '',
          payload: Buffer.from(
            JSON.stringify({ ranOn: workerId, action: sent.action, args: sent.args }),
          ),
        });
        requests.push(f);
      }
    });
    return stream;
  }
  const requests: RequestFrame[] = [];
  const desk = connectWorker('desk', ['display', 'user_files']);
  await eventually('desk connected', () => node.workers?.connected('alice').length === 1);

  const call = (
    action: string,
    args: Record<string, unknown>,
    needs: string[] | string,
    extra = {},
  ) =>
    node.dispatcher.dispatch(
      parsedEnvelope({
        action,
        args,
        runId: 'run-1',
        agentId: 'a',
        taskId: 't',
        callId: `c-${Math.random()}`,
        environment: typeof needs === 'string' ? needs : { needs },
        ...extra,
      }),
      alice,
    );
  const exec = { command: 'xdpyinfo' };

  await t.test('a misspelt need is invalid_environment_hint, never a reroute', async (t) => {
    const result = await node.dispatcher.dispatchHost(
      {
        action: 'exec',
        args: exec,
        runId: 'run-1',
        agentId: 'a',
        taskId: 't',
        environment: { needs: ['macos-tooling'] },
      },
      alice,
    );
    t.equal(result.ok === false && result.errorCode, 'invalid_environment_hint');
    t.same(await listConsentRequests(db, 'alice'), []);
    t.equal(requests.length, 0);
  });

  let cardId = '';
  await t.test(
    'no consent: consent_required with a card, nothing sent; a repeat does not stack cards',
    async (t) => {
      const { result, route } = await call('exec', exec, ['display']);
      t.equal(result.ok === false && result.errorCode, 'consent_required');
      t.same(route, { kind: 'refused' });
      const payload = (
        result as { payload: { reroutedFrom: string; consentRequest: Record<string, unknown> } }
      ).payload;
      t.equal(payload.reroutedFrom, 'workbench');
      t.match(payload.consentRequest, {
        workerId: 'desk',
        runId: 'run-1',
        action: 'exec',
        needs: ['display'],
        requiredScope: 'full',
        heldScope: 'none',
        status: 'pending',
      });
      t.notMatch(
        String(payload.consentRequest.summary),
        /xdpyinfo/,
        'the card carries no command text',
      );
      cardId = String(payload.consentRequest.id);
      const again = await call('exec', exec, ['display']);
      t.equal(
        (again.result as { payload: { consentRequest: { id: string } } }).payload.consentRequest.id,
        cardId,
      );
      t.equal((await listConsentRequests(db, 'alice', { status: 'pending' })).length, 1);
      t.equal(requests.length, 0, 'no frame reached the worker');
    },
  );

  await t.test('approved for less than the call takes: still never runs', async (t) => {
    const decided = await decideConsentRequest(db, 'alice', cardId, 'observe');
    t.equal(decided.kind, 'decided');
    const { result } = await call('exec', exec, ['display']);
    t.equal(result.ok === false && result.errorCode, 'consent_required');
    t.match((result as { payload: { consentRequest: unknown } }).payload.consentRequest, {
      requiredScope: 'full',
      heldScope: 'observe',
    });
    t.equal(requests.length, 0);
  });

  await t.test('observe runs a read of user files, never exec', async (t) => {
    const read = await call('fs_read', { path: 'notes.txt' }, ['user_files']);
    t.equal(read.result.ok, true);
    t.match(read.result, {
      payload: { ranOn: 'desk', action: 'fs_read' },
      routing: {
        target: 'worker',
        reroutedFrom: 'workbench',
        workerId: 'desk',
        scope: 'observe',
        needs: ['user_files'],
      },
    });
    t.same(read.route, { kind: 'worker', workerId: 'desk' });
    const run = await call('exec', exec, ['user_files']);
    t.equal(run.result.ok === false && run.result.errorCode, 'consent_required');
  });

  await t.test('approved at full: the same call runs on the worker, recorded', async (t) => {
    const pending = await listConsentRequests(db, 'alice', { status: 'pending' });
    for (const r of pending) await decideConsentRequest(db, 'alice', r.id, 'full');
    const before = requests.length;
    const { result } = await call('exec', exec, ['display']);
    t.equal(result.ok, true);
    t.match(result, { payload: { ranOn: 'desk', action: 'exec', args: { command: 'xdpyinfo' } } });
    t.equal(requests.length, before + 1);
    const sent = JSON.parse(requests.at(-1)!.payload.toString());
    t.same(sent.environment, { needs: ['display'] }, 'the same call, hint included');
    const routing = (result as { routing: { invocationId: string } }).routing;
    const records = await listWorkerInvocations(db, 'alice', { runId: 'run-1' });
    const record = records.find((r) => r.id === routing.invocationId);
    t.match(record, {
      workerId: 'desk',
      reroutedFrom: 'workbench',
      needs: ['display'],
      scope: 'full',
      action: 'exec',
      status: 'succeeded',
    });
    t.same(await listWorkerInvocations(db, 'bob'), [], "bob never sees alice's records");
  });

  await t.test('kill switch: kill_switch_engaged, no card', async (t) => {
    const cards = (await listConsentRequests(db, 'alice', { status: 'pending' })).length;
    await setKillSwitch(db, 'alice', ALL_WORKERS, true);
    const { result } = await call('exec', exec, ['display']);
    t.equal(result.ok === false && result.errorCode, 'kill_switch_engaged');
    await setWorkerScope(db, 'alice', 'desk', 'none');
    const stillKilled = await call('exec', exec, ['display']);
    t.equal(stillKilled.result.ok === false && stillKilled.result.errorCode, 'kill_switch_engaged');
    t.equal(
      (await listConsentRequests(db, 'alice', { status: 'pending' })).length,
      cards,
      'no card raised',
    );
    await setKillSwitch(db, 'alice', ALL_WORKERS, false);
    await setWorkerScope(db, 'alice', 'desk', 'full');
    await setKillSwitch(db, 'alice', 'desk', true);
    const one = await call('exec', exec, ['display']);
    t.equal(one.result.ok === false && one.result.errorCode, 'kill_switch_engaged');
    t.match((one.result as { payload: unknown }).payload, { workerIds: ['desk'] });
    await setKillSwitch(db, 'alice', 'desk', false);
  });

  await t.test("another user's worker is never chosen", async (t) => {
    const { result } = await node.dispatcher.dispatch(
      parsedEnvelope({
        action: 'exec',
        args: exec,
        runId: 'run-b',
        agentId: 'a',
        taskId: 't',
        environment: { needs: ['display'] },
      }),
      bob,
    );
    t.equal(result.ok === false && result.errorCode, 'worker_unavailable');
    t.match((result as { payload: unknown }).payload, { workers: [], requiredLabels: ['display'] });
  });

  await t.test(
    'a need no worker provides: worker_unavailable naming what each lacks',
    async (t) => {
      const { result } = await call('exec', exec, ['gpu']);
      t.equal(result.ok === false && result.errorCode, 'worker_unavailable');
      t.match((result as { payload: unknown }).payload, {
        reroutedFrom: 'workbench',
        unmetNeeds: ['gpu'],
        workers: [{ workerId: 'desk', connected: true, missing: ['gpu'] }],
      });
      t.match(result.ok === false && result.message, /memql worker/);
    },
  );

  await t.test('fetch is not rerouted: the mismatch stands', async (t) => {
    const { result } = await call('fetch', { url: 'https://example.com/', path: 'page.html' }, [
      'display',
    ]);
    t.equal(result.ok === false && result.errorCode, 'environment_mismatch');
  });

  await t.test('a disconnected worker: the typed refusal at once', async (t) => {
    desk.close();
    await eventually('desk gone', () => node.workers?.connected('alice').length === 0);
    const { result } = await call('exec', exec, ['display']);
    t.equal(result.ok === false && result.errorCode, 'worker_unavailable');
    t.match((result as { payload: unknown }).payload, {
      workers: [{ workerId: 'desk', connected: false }],
    });
    await eventually(
      'recorded as disconnected',
      async () => (await listWorkerHosts(db, 'alice'))[0]?.disconnectedAt !== null,
    );
  });
  t.equal(localCalls, 0, 'the workbench never saw a mismatched call');
});
