import t from 'tap';
import { callerWorkers, isCallerWorker } from '../../src/api/index.js';
import { ClientError, WorkbenchClient } from '../../src/client/index.js';
import {
  getConsentRequest,
  insertWorkerInvocation,
  listAuditEvents,
  raiseConsentRequest,
  readConsentState,
  recordWorkerConnected,
  recordWorkerDisconnected,
} from '../../src/store/index.js';
import { type Json, startApiHarness } from './api-support.js';

/**
 * The user's controls over worker hosts, end to end over HTTP with two users: rows
 * are made through the store (the reroute that makes them in production is the
 * agent's), decisions go through the routes, and the store shows what they changed.
 */

const h = await startApiHarness(t);

async function connect(owner: string, workerId: string, os = 'darwin') {
  return recordWorkerConnected(h.db, {
    ownerUserId: owner,
    workerId,
    os,
    provides: ['display', 'user_files'],
    version: '0.1.0',
    agentNodeId: 'node-api',
  });
}

async function card(
  owner: string,
  workerId: string,
  runId: string,
  requiredScope: 'observe' | 'full',
) {
  return raiseConsentRequest(h.db, {
    ownerUserId: owner,
    workerId,
    runId,
    action: requiredScope === 'full' ? 'exec' : 'fs_read',
    needs: requiredScope === 'full' ? ['display'] : ['user_files'],
    requiredScope,
    heldScope: 'none',
    summary: `${requiredScope === 'full' ? 'exec' : 'fs_read'} needing a worker`,
  });
}

await connect('alice', 'alice-laptop');
await connect('alice', 'alice-desktop', 'linux');
await connect('bob', 'bob-laptop');

t.test(
  'GET /v1/workers lists only the caller’s workers, stored, with no consent yet',
  async (t) => {
    const res = await h.json<Json>(h.alice, 'GET', '/v1/workers');
    t.equal(res.status, 200);
    t.equal(res.body.killSwitch, false);
    t.same(
      res.body.workers.map((w: Json) => w.workerId),
      ['alice-desktop', 'alice-laptop'],
    );
    const laptop = res.body.workers.find((w: Json) => w.workerId === 'alice-laptop');
    t.match(laptop, {
      connected: false,
      os: 'darwin',
      provides: ['display', 'user_files'],
      version: '0.1.0',
      disconnectedAt: null,
      inFlight: 0,
      capacity: null,
      scope: 'none',
      killSwitch: false,
    });
    t.ok(Date.parse(laptop.connectedAt) > 0);
    const bob = await h.json<Json>(h.bob, 'GET', '/v1/workers');
    t.same(
      bob.body.workers.map((w: Json) => w.workerId),
      ['bob-laptop'],
    );
    const fleet = await h.json<Json>(h.alice, 'GET', '/v1/fleet/workbenches');
    t.equal(fleet.status, 200);
    t.equal(fleet.body.replicas.length, 1, 'the replicas are still there');
    t.same(
      fleet.body.workers.map((w: Json) => w.workerId),
      ['alice-desktop', 'alice-laptop'],
      'the fleet names the caller’s workers beside the replicas',
    );
  },
);

t.test('a recorded disconnection shows, and a reconnection clears it', async (t) => {
  await connect('alice', 'alice-old', 'windows');
  await recordWorkerDisconnected(h.db, 'alice', 'alice-old', 'node-api');
  const res = await h.json<Json>(h.alice, 'GET', '/v1/workers');
  const old = res.body.workers.find((w: Json) => w.workerId === 'alice-old');
  t.ok(old.disconnectedAt, 'the end is recorded');
  await connect('alice', 'alice-old', 'windows');
  const again = await h.json<Json>(h.alice, 'GET', '/v1/workers');
  t.equal(again.body.workers.find((w: Json) => w.workerId === 'alice-old').disconnectedAt, null);
});

t.test('approve at the required tier grants that standing scope', async (t) => {
  const request = await card('alice', 'alice-laptop', 'run-a1', 'observe');
  const pending = await h.json<Json>(h.alice, 'GET', '/v1/consent-requests');
  t.equal(pending.status, 200);
  const shown = pending.body.requests.find((r: Json) => r.id === request.id);
  t.match(shown, {
    workerId: 'alice-laptop',
    runId: 'run-a1',
    action: 'fs_read',
    needs: ['user_files'],
    requiredScope: 'observe',
    heldScope: 'none',
    status: 'pending',
    decidedAt: null,
    decidedScope: null,
  });
  t.notOk(
    (await h.json<Json>(h.bob, 'GET', '/v1/consent-requests')).body.requests.some(
      (r: Json) => r.id === request.id,
    ),
    'bob never sees alice’s request',
  );

  const approved = await h.json<Json>(
    h.alicePerson,
    'POST',
    `/v1/consent-requests/${request.id}/approve`,
  );
  t.equal(approved.status, 200);
  t.equal(approved.body.covers, true);
  t.equal(approved.body.request.status, 'approved');
  t.equal(approved.body.request.decidedScope, 'observe');
  t.ok(approved.body.request.decidedAt);
  t.match(approved.body.consent, { workerId: 'alice-laptop', scope: 'observe', killSwitch: false });
  t.match(approved.body.message, /repeat the call/);
  const state = await readConsentState(h.db, 'alice');
  t.equal(state.workers.get('alice-laptop')?.scope, 'observe', 'stored');

  const again = await h.json<Json>(
    h.alicePerson,
    'POST',
    `/v1/consent-requests/${request.id}/approve`,
    {
      scope: 'full',
    },
  );
  t.equal(again.status, 409, 'a decided request is a conflict');
  t.equal(again.body.errorCode, 'invalid_arguments');
  t.match(again.body.message, /already approved at observe/);
  t.match(again.body.message, /memql workers scope alice-laptop/);
  t.equal((await readConsentState(h.db, 'alice')).workers.get('alice-laptop')?.scope, 'observe');
  const deny = await h.json<Json>(h.alicePerson, 'POST', `/v1/consent-requests/${request.id}/deny`);
  t.equal(deny.status, 409, 'denying it afterwards is refused alike');
  t.equal((await getConsentRequest(h.db, 'alice', request.id))?.status, 'approved', 'unchanged');

  const listed = await h.json<Json>(h.alice, 'GET', '/v1/consent-requests?status=approved');
  t.ok(listed.body.requests.some((r: Json) => r.id === request.id));
  const events = await listAuditEvents(h.db, { runId: 'run-a1' });
  t.match(
    events.filter((e) => e.eventType === 'worker_consent.approved'),
    [
      {
        ownerUserId: 'alice',
        metadata: {
          requestId: request.id,
          workerId: 'alice-laptop',
          requiredScope: 'observe',
          decidedScope: 'observe',
          standingScope: 'observe',
          tokenKind: 'person',
        },
      },
    ],
    'one audit event, ids and scopes only',
  );
});

t.test('approve for less than required: recorded, covers false, the lower tier held', async (t) => {
  const request = await card('alice', 'alice-desktop', 'run-a2', 'full');
  const res = await h.json<Json>(
    h.alicePerson,
    'POST',
    `/v1/consent-requests/${request.id}/approve`,
    {
      scope: 'observe',
    },
  );
  t.equal(res.status, 200);
  t.equal(res.body.covers, false);
  t.equal(res.body.request.decidedScope, 'observe');
  t.equal(res.body.consent.scope, 'observe');
  t.match(res.body.message, /will still not run/);
  const workers = await h.json<Json>(h.alice, 'GET', '/v1/workers');
  t.equal(workers.body.workers.find((w: Json) => w.workerId === 'alice-desktop').scope, 'observe');
});

t.test('approving never lowers a standing scope', async (t) => {
  await h.json<Json>(h.alicePerson, 'PUT', '/v1/workers/alice-desktop/scope', { scope: 'full' });
  const request = await card('alice', 'alice-desktop', 'run-a3', 'observe');
  const res = await h.json<Json>(
    h.alicePerson,
    'POST',
    `/v1/consent-requests/${request.id}/approve`,
  );
  t.equal(res.body.consent.scope, 'full');
  t.equal(res.body.covers, true);
});

t.test('deny leaves the scope and records the decision', async (t) => {
  await h.json<Json>(h.alicePerson, 'PUT', '/v1/workers/alice-laptop/scope', { scope: 'none' });
  const request = await card('alice', 'alice-laptop', 'run-a4', 'full');
  const res = await h.json<Json>(h.alicePerson, 'POST', `/v1/consent-requests/${request.id}/deny`);
  t.equal(res.status, 200);
  t.equal(res.body.request.status, 'denied');
  t.equal(res.body.request.decidedScope, null);
  t.equal((await readConsentState(h.db, 'alice')).workers.get('alice-laptop')?.scope, 'none');
  const denied = await h.json<Json>(h.alice, 'GET', '/v1/consent-requests?status=denied');
  t.same(
    denied.body.requests.map((r: Json) => r.id),
    [request.id],
  );
  const events = await listAuditEvents(h.db, { runId: 'run-a4' });
  t.same(
    events.map((e) => e.eventType),
    ['worker_consent.denied'],
  );
});

t.test(
  'user B never sees nor decides user A’s requests: not_found, as for a missing one',
  async (t) => {
    const request = await card('alice', 'alice-laptop', 'run-a5', 'observe');
    for (const path of [`${request.id}/approve`, `${request.id}/deny`, 'csr_never-made/approve']) {
      const res = await h.json<Json>(h.bobPerson, 'POST', `/v1/consent-requests/${path}`);
      t.equal(res.status, 404, path);
      t.equal(res.body.errorCode, 'not_found');
    }
    const mine = await h.json<Json>(
      h.bobPerson,
      'POST',
      `/v1/consent-requests/${request.id}/approve`,
    );
    const missing = await h.json<Json>(
      h.bobPerson,
      'POST',
      '/v1/consent-requests/csr_nope/approve',
    );
    t.equal(
      mine.body.message.replace(request.id, 'X'),
      missing.body.message.replace('csr_nope', 'X'),
      'the same words for another user’s id and a missing one',
    );
    t.equal((await getConsentRequest(h.db, 'alice', request.id))?.status, 'pending', 'untouched');
    const scope = await h.json<Json>(h.bobPerson, 'PUT', '/v1/workers/alice-laptop/scope', {
      scope: 'full',
    });
    t.equal(scope.status, 404, 'nor sets the scope of alice’s worker');
    const kill = await h.json<Json>(h.bob, 'POST', '/v1/workers/kill-switch', {
      engaged: true,
      workerId: 'alice-laptop',
    });
    t.equal(kill.status, 404);
    t.equal(
      (await readConsentState(h.db, 'alice')).workers.get('alice-laptop')?.killSwitch ?? false,
      false,
    );
  },
);

t.test('PUT scope sets any rung, lowering included', async (t) => {
  const up = await h.json<Json>(h.alicePerson, 'PUT', '/v1/workers/alice-laptop/scope', {
    scope: 'full',
  });
  t.equal(up.status, 200);
  t.match(up.body, { consent: { workerId: 'alice-laptop', scope: 'full' }, previousScope: 'none' });
  const down = await h.json<Json>(h.alicePerson, 'PUT', '/v1/workers/alice-laptop/scope', {
    scope: 'observe',
  });
  t.match(down.body, { consent: { scope: 'observe' }, previousScope: 'full' });
  const workers = await h.json<Json>(h.alice, 'GET', '/v1/workers');
  t.equal(workers.body.workers.find((w: Json) => w.workerId === 'alice-laptop').scope, 'observe');
  const events = (await listAuditEvents(h.db, {})).filter(
    (e) => e.eventType === 'worker_scope.set',
  );
  t.match(events.at(-1), {
    ownerUserId: 'alice',
    metadata: { workerId: 'alice-laptop', scope: 'observe', previousScope: 'full' },
  });
  const unknown = await h.json<Json>(h.alicePerson, 'PUT', '/v1/workers/never-seen/scope', {
    scope: 'full',
  });
  t.equal(unknown.status, 404);
  t.match(unknown.body.message, /memql workers ls/);
});

t.test('the kill switch, user-wide and per worker, shows in GET /v1/workers', async (t) => {
  const one = await h.json<Json>(h.alicePerson, 'POST', '/v1/workers/kill-switch', {
    engaged: true,
    workerId: 'alice-desktop',
  });
  t.equal(one.status, 200);
  t.match(one.body.killSwitch, { workerId: 'alice-desktop', engaged: true });
  let view = (await h.json<Json>(h.alice, 'GET', '/v1/workers')).body;
  t.equal(view.killSwitch, false, 'the user-wide switch is still off');
  t.equal(view.workers.find((w: Json) => w.workerId === 'alice-desktop').killSwitch, true);
  t.equal(view.workers.find((w: Json) => w.workerId === 'alice-laptop').killSwitch, false);

  const all = await h.json<Json>(h.alicePerson, 'POST', '/v1/workers/kill-switch', {
    engaged: true,
  });
  t.match(all.body.killSwitch, { workerId: null, engaged: true });
  view = (await h.json<Json>(h.alice, 'GET', '/v1/workers')).body;
  t.equal(view.killSwitch, true);
  t.equal((await readConsentState(h.db, 'alice')).allKilled, true, 'the gate reads it');
  t.equal(
    (await h.json<Json>(h.bob, 'GET', '/v1/workers')).body.killSwitch,
    false,
    'bob’s is his own',
  );

  await h.json<Json>(h.alicePerson, 'POST', '/v1/workers/kill-switch', { engaged: false });
  await h.json<Json>(h.alicePerson, 'POST', '/v1/workers/kill-switch', {
    engaged: false,
    workerId: 'alice-desktop',
  });
  view = (await h.json<Json>(h.alice, 'GET', '/v1/workers')).body;
  t.equal(view.killSwitch, false);
  t.equal(view.workers.find((w: Json) => w.workerId === 'alice-desktop').killSwitch, false);
  const events = (await listAuditEvents(h.db, {})).filter(
    (e) => e.eventType === 'worker_kill_switch.set',
  );
  t.same(
    events.map((e) => [e.metadata.workerId, e.metadata.engaged]),
    [
      ['alice-desktop', true],
      [null, true],
      [null, false],
      ['alice-desktop', false],
    ],
  );
});

t.test(
  'routing records: listed newest first, filtered by run and worker, owner-scoped',
  async (t) => {
    const base = { reroutedFrom: 'workbench', callId: null } as const;
    const first = await insertWorkerInvocation(h.db, {
      ...base,
      ownerUserId: 'alice',
      workerId: 'alice-laptop',
      runId: 'run-r1',
      action: 'fs_read',
      needs: ['user_files'],
      scope: 'observe',
    });
    const second = await insertWorkerInvocation(h.db, {
      ...base,
      ownerUserId: 'alice',
      workerId: 'alice-desktop',
      runId: 'run-r2',
      action: 'exec',
      callId: 'call-7',
      needs: ['display'],
      scope: 'full',
    });
    const bobs = await insertWorkerInvocation(h.db, {
      ...base,
      ownerUserId: 'bob',
      workerId: 'bob-laptop',
      runId: 'run-r1',
      action: 'fs_list',
      needs: ['user_files'],
      scope: 'observe',
    });
    const byRun = await h.json<Json>(h.alice, 'GET', '/v1/worker-invocations?runId=run-r1');
    t.equal(byRun.status, 200);
    t.same(
      byRun.body.invocations.map((i: Json) => i.id),
      [first.id],
      'only alice’s record of run-r1',
    );
    t.match(byRun.body.invocations[0], {
      workerId: 'alice-laptop',
      runId: 'run-r1',
      action: 'fs_read',
      reroutedFrom: 'workbench',
      needs: ['user_files'],
      scope: 'observe',
      status: 'running',
      errorCode: null,
      finishedAt: null,
    });
    const byWorker = await h.json<Json>(
      h.alice,
      'GET',
      '/v1/worker-invocations?workerId=alice-desktop',
    );
    t.same(
      byWorker.body.invocations.map((i: Json) => i.id),
      [second.id],
    );
    const all = await h.json<Json>(h.alice, 'GET', '/v1/worker-invocations');
    t.same(
      all.body.invocations
        .map((i: Json) => i.id)
        .filter((id: string) => id === first.id || id === second.id),
      [second.id, first.id],
      'newest first',
    );
    const one = await h.json<Json>(h.alice, 'GET', `/v1/worker-invocations/${second.id}`);
    t.equal(one.status, 200);
    t.equal(one.body.invocation.callId, 'call-7');
    const others = await h.json<Json>(h.alice, 'GET', `/v1/worker-invocations/${bobs.id}`);
    t.equal(others.status, 404);
    t.equal(others.body.errorCode, 'not_found');
  },
);

t.test('bad input is invalid_arguments naming the field', async (t) => {
  const cases: [string, string, unknown, RegExp][] = [
    [
      'PUT',
      '/v1/workers/alice-laptop/scope',
      { scope: 'root' },
      /scope: expected one of none, observe, full/,
    ],
    ['PUT', '/v1/workers/alice-laptop/scope', {}, /scope/],
    ['PUT', '/v1/workers/alice-laptop/scope', { scope: 'full', extra: 1 }, /extra: unknown field/],
    ['POST', '/v1/workers/kill-switch', { engaged: 'yes' }, /engaged: expected true/],
    ['POST', '/v1/workers/kill-switch', {}, /engaged/],
    ['POST', '/v1/workers/kill-switch', { engaged: true, workerId: '' }, /workerId: empty/],
    ['POST', '/v1/workers/kill-switch', { engaged: true, workerId: 7 }, /workerId/],
    [
      'GET',
      '/v1/consent-requests?status=open',
      undefined,
      /status: expected one of pending, approved, denied/,
    ],
    [
      'GET',
      '/v1/consent-requests?status=pending&status=denied',
      undefined,
      /status: given more than once/,
    ],
    ['GET', '/v1/consent-requests?limit=0', undefined, /limit/],
    ['GET', '/v1/worker-invocations?run=run-r1', undefined, /run: unknown parameter/],
    ['GET', '/v1/worker-invocations?runId=', undefined, /runId/],
  ];
  const pending = await card('alice', 'alice-laptop', 'run-bad', 'full');
  cases.push(
    [
      'POST',
      `/v1/consent-requests/${pending.id}/approve`,
      { scope: 'none' },
      /scope: expected observe or full/,
    ],
    ['POST', `/v1/consent-requests/${pending.id}/approve`, { scope: 'everything' }, /scope/],
    ['POST', `/v1/consent-requests/${pending.id}/deny`, { reason: 'x' }, /reason: unknown field/],
  );
  for (const [method, path, body, message] of cases) {
    const res = await h.json<Json>(h.alicePerson, method, path, body);
    t.equal(res.status, 400, `${method} ${path} ${JSON.stringify(body)}`);
    t.equal(res.body.errorCode, 'invalid_arguments');
    t.match(res.body.message, message);
  }
  const text = await h.call(h.alicePerson, '/v1/workers/alice-laptop/scope', {
    method: 'PUT',
    body: '{not json',
  });
  t.equal(text.status, 400);
  t.equal((await getConsentRequest(h.db, 'alice', pending.id))?.status, 'pending', 'still pending');
  const noToken = await h.json<Json>(null, 'GET', '/v1/workers');
  t.equal(noToken.status, 401);
});

t.test('a live directory marks workers connected here and wins over the stored row', async (t) => {
  const connectedAt = new Date('2026-01-02T03:04:05.000Z');
  const directory = {
    connected: (userId: string) =>
      userId === 'alice'
        ? [
            {
              workerId: 'alice-laptop',
              os: 'darwin',
              provides: ['display', 'macos_tooling'],
              capacity: 2,
              inFlight: 1,
              version: '0.2.0',
              connectedAt,
            },
            {
              workerId: 'alice-new',
              os: 'linux',
              provides: [],
              capacity: 1,
              inFlight: 0,
              version: '0.2.0',
              connectedAt,
            },
          ]
        : [],
  };
  const view = await callerWorkers(h.db, directory, 'alice');
  const laptop = view.workers.find((w) => w.workerId === 'alice-laptop');
  t.match(laptop, {
    connected: true,
    provides: ['display', 'macos_tooling'],
    capacity: 2,
    inFlight: 1,
    version: '0.2.0',
    connectedAt: connectedAt.toISOString(),
    disconnectedAt: null,
    scope: 'observe',
  });
  t.equal(view.workers.find((w) => w.workerId === 'alice-desktop')?.connected, false);
  t.equal(view.workers.find((w) => w.workerId === 'alice-new')?.connected, true, 'live only');
  t.ok(await isCallerWorker(h.db, directory, 'alice', 'alice-new'));
  t.notOk(await isCallerWorker(h.db, directory, 'bob', 'alice-new'));
  t.same(
    (await callerWorkers(h.db, directory, 'bob')).workers.map((w) => [w.workerId, w.connected]),
    [['bob-laptop', false]],
  );
});

t.test('the TypeScript client calls every route', async (t) => {
  const alice = new WorkbenchClient({ baseUrl: h.url, token: h.alicePerson });
  const listed = await alice.workers.list();
  t.ok(listed.workers.some((w) => w.workerId === 'alice-laptop'));
  t.same((await alice.fleet()).workers, listed.workers);
  t.equal((await alice.workers.setScope('alice-laptop', 'none')).consent.scope, 'none');
  t.same(
    (await alice.workers.setKillSwitch(true, { workerId: 'alice-laptop' })).killSwitch.engaged,
    true,
  );
  t.equal((await alice.workers.setKillSwitch(false)).killSwitch.workerId, null);
  await alice.workers.setKillSwitch(false, { workerId: 'alice-laptop' });
  const a = await card('alice', 'alice-laptop', 'run-c1', 'full');
  const b = await card('alice', 'alice-laptop', 'run-c2', 'observe');
  const pending = await alice.workers.listConsentRequests();
  t.ok(pending.some((r) => r.id === a.id) && pending.some((r) => r.id === b.id));
  const approved = await alice.workers.approveConsentRequest(a.id, { scope: 'observe' });
  t.equal(approved.covers, false);
  t.equal((await alice.workers.denyConsentRequest(b.id)).status, 'denied');
  const twice = await alice.workers.approveConsentRequest(a.id).catch((err: unknown) => err);
  t.ok(twice instanceof ClientError);
  t.match(twice, { code: 'invalid_arguments', status: 409 });
  t.ok((await alice.workers.listConsentRequests({ status: 'denied' })).some((r) => r.id === b.id));
  const records = await alice.workers.listInvocations({ runId: 'run-r2' });
  t.equal(records.length, 1);
  t.equal((await alice.workers.getInvocation(records[0]!.id)).action, 'exec');
  t.same(await alice.workers.listInvocations({ workerId: 'nobody' }), []);
});
