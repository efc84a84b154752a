import t, { type Test } from 'tap';
import {
  createOperatorCredential,
  getConsentRequest,
  hashApiToken,
  listAuditEvents,
  loadMigrations,
  migrate,
  raiseConsentRequest,
  readConsentState,
  recordWorkerConnected,
  resolveTokenIdentity,
  setWorkerScope,
} from '../../src/store/index.js';
import { openPostgres } from '../../src/store/postgres-driver.js';
import { createTestDatabase } from '../support/postgres.js';
import { type Json, startApiHarness } from './api-support.js';

/**
 * Only a person grants consent, over HTTP against a live API (real Postgres): an agent
 * token (what a tool loop holds) reads consent requests and workers, lowers a scope
 * and turns the kill switch on; approving, denying, raising a scope and turning the
 * kill switch off answer it 403 `person_required`, whose message names no command or
 * route, and change nothing. A person token does all of it, and each decision's audit
 * event records which kind of token made it.
 */

const h = await startApiHarness(t);

await recordWorkerConnected(h.db, {
  ownerUserId: 'alice',
  workerId: 'laptop',
  os: 'linux',
  provides: ['display', 'user_files'],
  version: '0.1.0',
  agentNodeId: 'node-api',
});

const card = (runId: string) =>
  raiseConsentRequest(h.db, {
    ownerUserId: 'alice',
    workerId: 'laptop',
    runId,
    action: 'exec',
    needs: ['display'],
    requiredScope: 'full',
    heldScope: 'none',
    summary: 'exec needing display',
  });

/** What a refusal must never carry: a way for the model to do it itself. */
function assertNamesNoWayToDoIt(t: Test, message: string) {
  t.notMatch(message, /memql /, 'no CLI command');
  t.notMatch(message, /\/v1\//, 'no route');
  t.notMatch(message, /approve csr_|kill-switch|workers scope/, 'no command spelled out');
  t.match(message, /console/, 'says where the user does it');
}

t.test('an agent token cannot approve or deny: person_required, nothing changes', async (t) => {
  const request = await card('run-p1');
  const listed = await h.json<Json>(h.alice, 'GET', '/v1/consent-requests');
  t.equal(listed.status, 200, 'an agent token reads the requests');
  t.ok(listed.body.requests.some((r: Json) => r.id === request.id));
  for (const [verb, body] of [
    ['approve', {}],
    ['approve', { scope: 'full' }],
    ['deny', {}],
  ] as const) {
    const res = await h.json<Json>(
      h.alice,
      'POST',
      `/v1/consent-requests/${request.id}/${verb}`,
      body,
    );
    t.equal(res.status, 403, `${verb} ${JSON.stringify(body)}`);
    t.equal(res.body.errorCode, 'person_required');
    assertNamesNoWayToDoIt(t, res.body.message);
  }
  const missing = await h.json<Json>(h.alice, 'POST', '/v1/consent-requests/csr_nope/approve');
  t.equal(missing.status, 403, 'refused before the id is looked at: existence does not leak');
  t.equal((await getConsentRequest(h.db, 'alice', request.id))?.status, 'pending', 'untouched');
  t.equal((await readConsentState(h.db, 'alice')).workers.get('laptop'), undefined, 'no scope');
  const events = await listAuditEvents(h.db, { runId: 'run-p1' });
  t.same(events, [], 'no decision recorded');
});

t.test('a person token approves, and the audit event says a person decided', async (t) => {
  const request = await card('run-p2');
  const res = await h.json<Json>(
    h.alicePerson,
    'POST',
    `/v1/consent-requests/${request.id}/approve`,
  );
  t.equal(res.status, 200);
  t.equal(res.body.covers, true);
  const person = await resolveTokenIdentity(h.db, h.alicePerson);
  const events = await listAuditEvents(h.db, { runId: 'run-p2' });
  t.match(events, [
    {
      eventType: 'worker_consent.approved',
      metadata: { requestId: request.id, tokenKind: 'person', tokenId: person?.tokenId },
    },
  ]);
  const denied = await card('run-p3');
  const deny = await h.json<Json>(h.alicePerson, 'POST', `/v1/consent-requests/${denied.id}/deny`);
  t.equal(deny.status, 200);
  t.match(await listAuditEvents(h.db, { runId: 'run-p3' }), [
    { eventType: 'worker_consent.denied', metadata: { tokenKind: 'person' } },
  ]);
});

t.test('scope: an agent token may lower it or keep it, never raise it', async (t) => {
  await setWorkerScope(h.db, 'alice', 'laptop', 'observe');
  const raise = await h.json<Json>(h.alice, 'PUT', '/v1/workers/laptop/scope', { scope: 'full' });
  t.equal(raise.status, 403);
  t.equal(raise.body.errorCode, 'person_required');
  assertNamesNoWayToDoIt(t, raise.body.message);
  t.equal((await readConsentState(h.db, 'alice')).workers.get('laptop')?.scope, 'observe');

  const keep = await h.json<Json>(h.alice, 'PUT', '/v1/workers/laptop/scope', {
    scope: 'observe',
  });
  t.equal(keep.status, 200, 'keeping it grants nothing');
  const lower = await h.json<Json>(h.alice, 'PUT', '/v1/workers/laptop/scope', { scope: 'none' });
  t.equal(lower.status, 200);
  t.match(lower.body, { consent: { scope: 'none' }, previousScope: 'observe' });

  const byPerson = await h.json<Json>(h.alicePerson, 'PUT', '/v1/workers/laptop/scope', {
    scope: 'full',
  });
  t.equal(byPerson.status, 200, 'a person raises it');
  t.equal((await readConsentState(h.db, 'alice')).workers.get('laptop')?.scope, 'full');
  const events = (await listAuditEvents(h.db, {})).filter(
    (e) => e.eventType === 'worker_scope.set',
  );
  t.same(
    events.map((e) => [e.metadata.scope, e.metadata.tokenKind]),
    [
      ['observe', 'agent'],
      ['none', 'agent'],
      ['full', 'person'],
    ],
    'who set each, and never a refused raise',
  );
});

t.test('kill switch: an agent token turns it on, only a person turns it off', async (t) => {
  const on = await h.json<Json>(h.alice, 'POST', '/v1/workers/kill-switch', { engaged: true });
  t.equal(on.status, 200);
  t.equal((await readConsentState(h.db, 'alice')).allKilled, true);
  for (const body of [{ engaged: false }, { engaged: false, workerId: 'laptop' }]) {
    const off = await h.json<Json>(h.alice, 'POST', '/v1/workers/kill-switch', body);
    t.equal(off.status, 403, JSON.stringify(body));
    t.equal(off.body.errorCode, 'person_required');
    assertNamesNoWayToDoIt(t, off.body.message);
  }
  t.equal((await readConsentState(h.db, 'alice')).allKilled, true, 'still on');
  const byPerson = await h.json<Json>(h.alicePerson, 'POST', '/v1/workers/kill-switch', {
    engaged: false,
  });
  t.equal(byPerson.status, 200);
  t.equal((await readConsentState(h.db, 'alice')).allKilled, false);
  const events = (await listAuditEvents(h.db, {})).filter(
    (e) => e.eventType === 'worker_kill_switch.set',
  );
  t.same(
    events.map((e) => [e.metadata.engaged, e.metadata.tokenKind]),
    [
      [true, 'agent'],
      [false, 'person'],
    ],
  );
});

t.test('GET /v1/me says which kind of token is calling', async (t) => {
  t.same((await h.json<Json>(h.alice, 'GET', '/v1/me')).body, {
    userId: 'alice',
    tokenKind: 'agent',
  });
  t.same((await h.json<Json>(h.alicePerson, 'GET', '/v1/me')).body, {
    userId: 'alice',
    tokenKind: 'person',
  });
});

t.test('an operator chooses the kind of a token it makes', async (t) => {
  const operator = (await createOperatorCredential(h.db)).token;
  const person = await h.json<Json>(operator, 'POST', '/v1/admin/tokens', {
    userId: 'carol',
    kind: 'person',
  });
  t.equal(person.status, 201);
  t.equal(person.body.token.kind, 'person');
  t.match(person.body.secret, /^mqp_/, 'a person token is recognisable by its prefix');
  const agent = await h.json<Json>(operator, 'POST', '/v1/admin/tokens', { userId: 'carol' });
  t.equal(agent.body.token.kind, 'agent', 'agent unless asked');
  t.match(agent.body.secret, /^mqt_/);
  const listed = await h.json<Json>(operator, 'GET', '/v1/admin/tokens?userId=carol');
  t.same(listed.body.tokens.map((k: Json) => k.kind).sort(), ['agent', 'person']);
  const bad = await h.json<Json>(operator, 'POST', '/v1/admin/tokens', {
    userId: 'carol',
    kind: 'root',
  });
  t.equal(bad.status, 400);
  t.match(bad.body.message, /kind: expected agent or person/);
  t.same((await h.json<Json>(person.body.secret, 'GET', '/v1/me')).body, {
    userId: 'carol',
    tokenKind: 'person',
  });
});

t.test('a token made before kinds existed is an agent token and keeps working', async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const db = openPostgres({ url: database.url });
  t.teardown(() => db.close());
  const all = await loadMigrations();
  await migrate(
    db,
    all.filter((m) => m.version < 9),
  );
  // The row as the API wrote it before migration 009.
  const token = 'mqt_made-before-token-kinds-existed';
  const hash = hashApiToken(token);
  await db.execute(
    'insert into api_token (token_hash, user_id, label, id) values ($1, $2, $3, $4)',
    [hash, 'old-user', 'old', `tok_${hash.slice(0, 16)}`],
  );
  await migrate(db, all);
  t.match(await resolveTokenIdentity(db, token), { userId: 'old-user', kind: 'agent' });
});
