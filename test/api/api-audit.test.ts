import t from 'tap';
import { createApiToken, createOperatorCredential } from '../../src/store/index.js';
import { type Json, startApiHarness } from './api-support.js';

/**
 * The audit trail and a user's tokens over HTTP, on a live API (Postgres, bwrap): each
 * user reads only their own events, newest first, filtered and paged; an operator reads
 * everyone's; a user lists their tokens and revokes one with their person token only.
 */

const h = await startApiHarness(t);
const operator = (await createOperatorCredential(h.db, { label: 'audit test' })).token;

t.test("GET /v1/audit: the caller's events, newest first, filtered and paged", async (t) => {
  const run = await h.newRun(h.alice);
  await h.dispatch(h.alice, run, 'fs_write', { path: 'a.txt', content: 'a' });
  await h.dispatch(h.alice, run, 'exec', { command: 'cat a.txt' });
  const bobRun = await h.newRun(h.bob);
  await h.dispatch(h.bob, bobRun, 'exec', { command: 'true' });

  const all = await h.json<Json>(h.alice, 'GET', '/v1/audit?limit=500');
  t.equal(all.status, 200);
  const events = all.body.events as { id: number; eventType: string; runId: string }[];
  t.ok(events.length >= 3, `alice has events (${events.length})`);
  t.ok(
    events.every((e, i) => i === 0 || e.id < events[i - 1]!.id),
    'newest first',
  );
  t.notOk(
    events.some((e) => e.runId === bobRun),
    "none of bob's",
  );
  const commands = await h.json<Json>(
    h.alice,
    'GET',
    `/v1/audit?runId=${run}&type=workspace_command.`,
  );
  t.same(
    (commands.body.events as { eventType: string }[]).map((e) => e.eventType),
    ['workspace_command.completed', 'workspace_command.running', 'workspace_command.queued'],
    "one run's command events",
  );
  const first = await h.json<Json>(h.alice, 'GET', `/v1/audit?runId=${run}&limit=1`);
  t.equal(first.body.events.length, 1);
  t.ok(first.body.nextBefore, 'a next page');
  const second = await h.json<Json>(
    h.alice,
    'GET',
    `/v1/audit?runId=${run}&limit=1&before=${first.body.nextBefore}`,
  );
  t.ok(second.body.events[0].id < first.body.events[0].id, 'the next page is older');
  t.equal((await h.json(h.alice, 'GET', '/v1/audit?limit=0')).status, 400);
  t.equal((await h.json(null, 'GET', '/v1/audit')).status, 401);

  const everyone = await h.json<Json>(operator, 'GET', '/v1/admin/audit?limit=500');
  t.equal(everyone.status, 200);
  const runs = new Set((everyone.body.events as { runId: string }[]).map((e) => e.runId));
  t.ok(runs.has(run) && runs.has(bobRun), "the operator sees everyone's");
  const onlyBob = await h.json<Json>(operator, 'GET', '/v1/admin/audit?userId=bob');
  t.ok(
    (onlyBob.body.events as { ownerUserId: string }[]).every((e) => e.ownerUserId === 'bob'),
    "or one user's",
  );
  t.equal((await h.json(h.alice, 'GET', '/v1/admin/audit')).status, 403, 'not with a user token');
  const fleet = await h.json<Json>(operator, 'GET', '/v1/admin/fleet');
  t.match(fleet, { status: 200, body: { replicas: [{}] } }, 'the operator sees the replicas');
});

t.test('GET /v1/tokens and DELETE /v1/tokens/:id: a person revokes their own', async (t) => {
  const spare = await createApiToken(h.db, 'alice', { label: 'spare' });
  const listed = await h.json<Json>(h.alice, 'GET', '/v1/tokens');
  t.equal(listed.status, 200);
  const tokens = listed.body.tokens as { id: string; label: string; kind: string }[];
  t.ok(tokens.some((k) => k.id === spare.id && k.label === 'spare'));
  t.notMatch(JSON.stringify(listed.body), spare.token, 'never a secret');
  t.notOk(
    (await h.json<Json>(h.bob, 'GET', '/v1/tokens')).body.tokens.some(
      (k: { id: string }) => k.id === spare.id,
    ),
    "bob does not see alice's",
  );
  const byAgent = await h.json<Json>(h.alice, 'DELETE', `/v1/tokens/${spare.id}`);
  t.same([byAgent.status, byAgent.body.errorCode], [403, 'person_required']);
  const byBob = await h.json<Json>(h.bobPerson, 'DELETE', `/v1/tokens/${spare.id}`);
  t.equal(byBob.status, 404, "bob cannot revoke alice's");
  const revoked = await h.json<Json>(h.alicePerson, 'DELETE', `/v1/tokens/${spare.id}`);
  t.match(revoked, { status: 200, body: { revoked: true, token: { id: spare.id } } });
  t.equal((await h.json(spare.token, 'GET', '/v1/me')).status, 401, 'the token no longer works');
  const again = await h.json<Json>(h.alicePerson, 'DELETE', `/v1/tokens/${spare.id}`);
  t.match(again, { status: 200, body: { revoked: false } });
  const audit = await h.json<Json>(h.alice, 'GET', '/v1/audit?type=token.revoked');
  t.match(audit.body.events[0], { eventType: 'token.revoked', metadata: { tokenId: spare.id } });
});
