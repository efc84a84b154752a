import t from 'tap';
import { createOperatorCredential } from '../../src/store/index.js';
import { startApiHarness } from './api-support.js';

/** Users' tokens made, listed and revoked through the running node by an operator. */

const h = await startApiHarness(t);
const operator = (await createOperatorCredential(h.db, { label: 'test operator' })).token;

type TokenView = {
  id: string;
  userId: string;
  label: string | null;
  createdAt: string;
  revokedAt: string | null;
};

t.test('an operator makes a token, the user uses it, the operator revokes it', async (t) => {
  const made = await h.json<{ token: TokenView; secret: string }>(
    operator,
    'POST',
    '/v1/admin/tokens',
    { userId: 'dana', label: 'laptop' },
  );
  t.equal(made.status, 201);
  t.match(made.body.secret, /^mqt_/);
  t.match(made.body.token, { userId: 'dana', label: 'laptop', revokedAt: null });
  const dana = made.body.secret;

  const created = await h.json<{ run: { ownerUserId: string } }>(dana, 'POST', '/v1/runs', {});
  t.equal(created.status, 201, 'the new token works at once');
  t.equal(created.body.run.ownerUserId, 'dana');

  const listed = await h.json<{ tokens: TokenView[] }>(
    operator,
    'GET',
    '/v1/admin/tokens?userId=dana',
  );
  t.same(
    listed.body.tokens.map((k) => k.id),
    [made.body.token.id],
  );
  t.notMatch(JSON.stringify(listed.body), dana, 'a listing never carries a secret');

  const revoked = await h.json<{ token: TokenView; revoked: boolean }>(
    operator,
    'DELETE',
    `/v1/admin/tokens/${made.body.token.id}`,
  );
  t.equal(revoked.body.revoked, true);
  t.ok(revoked.body.token.revokedAt);
  t.equal((await h.json(dana, 'GET', '/v1/runs')).status, 401, 'a revoked token is refused');
  const again = await h.json<{ revoked: boolean }>(
    operator,
    'DELETE',
    `/v1/admin/tokens/${made.body.token.id}`,
  );
  t.equal(again.body.revoked, false, 'revoking twice changes nothing');
  t.equal((await h.json(operator, 'DELETE', '/v1/admin/tokens/tok_nope')).status, 404);

  const events = await h.db.query(
    `select event_type, metadata->>'tokenId' as token_id from audit_event
     where event_type like 'token.%' and owner_user_id = 'dana' order by id`,
  );
  t.same(events, [
    { event_type: 'token.created', token_id: made.body.token.id },
    { event_type: 'token.revoked', token_id: made.body.token.id },
  ]);
});

t.test(
  'the admin routes take only an operator credential, and it opens nothing else',
  async (t) => {
    const asUser = await h.json<{ errorCode: string }>(h.alice, 'POST', '/v1/admin/tokens', {
      userId: 'mallory',
    });
    t.equal(asUser.status, 403);
    t.equal(asUser.body.errorCode, 'forbidden');
    t.equal((await h.json(h.alice, 'GET', '/v1/admin/tokens')).status, 403);
    t.equal((await h.json(null, 'GET', '/v1/admin/tokens')).status, 401);
    t.equal((await h.json('mqo_not-a-credential', 'GET', '/v1/admin/tokens')).status, 401);
    t.equal((await h.json(operator, 'GET', '/v1/runs')).status, 401, 'not a user token');
    t.equal((await h.json(operator, 'POST', '/v1/dispatch', {})).status, 401);
    const bad = await h.json<{ errorCode: string }>(operator, 'POST', '/v1/admin/tokens', {
      userId: 'has space',
    });
    t.equal(bad.status, 400);
    t.equal(bad.body.errorCode, 'invalid_arguments');
  },
);
