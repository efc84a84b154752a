import { createHash } from 'node:crypto';
import t from 'tap';
import { revokeApiToken } from '../../src/store/index.js';
import { envelope, startApiHarness } from './api-support.js';

const h = await startApiHarness(t);

t.test('health, metrics and the console page need no token', async (t) => {
  const health = await h.call(null, '/healthz');
  t.equal(health.status, 200);
  t.same(await health.json(), { ok: true });
  const metrics = await h.call(null, '/metrics');
  t.equal(metrics.status, 200);
  t.match(await metrics.text(), 'memql_workspace_command_queue_depth');
  const page = await h.call(null, '/console');
  t.equal(page.status, 200);
  t.match(page.headers.get('content-type'), 'text/html');
  t.match(page.headers.get('content-security-policy'), "default-src 'none'");
  t.match(await page.text(), '<title>memql-workbench console</title>');
});

t.test('every /v1 route needs a valid bearer token', async (t) => {
  const routes: [string, string][] = [
    ['POST', '/v1/runs'],
    ['GET', '/v1/runs/run-x'],
    ['POST', '/v1/runs/run-x/end'],
    ['DELETE', '/v1/runs/run-x'],
    ['POST', '/v1/dispatch'],
    ['POST', '/v1/dispatch/stream'],
    ['GET', '/v1/commands/c-1'],
    ['GET', '/v1/workspaces'],
    ['GET', '/v1/artifacts'],
    ['GET', '/v1/artifacts/a-1/content'],
    ['GET', '/v1/fleet/workbenches'],
    ['GET', '/v1/no-such-route'],
  ];
  for (const [method, path] of routes) {
    for (const token of [null, 'mqt_wrong-token-value', '']) {
      const res = await h.call(token, path, { method });
      t.equal(res.status, 401, `${method} ${path} with ${token === null ? 'no' : 'a bad'} token`);
      const body = (await res.json()) as { ok: boolean; errorCode: string; message: string };
      t.equal(body.ok, false);
      t.equal(body.errorCode, 'unauthenticated');
      t.ok(body.message.length > 0);
    }
  }
  const basic = await h.call(null, '/v1/workspaces', {
    headers: { authorization: `Basic ${Buffer.from('alice:x').toString('base64')}` },
  });
  t.equal(basic.status, 401, 'only the Bearer scheme is accepted');
  t.equal(basic.headers.get('www-authenticate'), 'Bearer');
  const ok = await h.json(h.alice, 'GET', '/v1/workspaces');
  t.equal(ok.status, 200, 'the right token is accepted');
});

t.test('tokens are stored as SHA-256 hashes only, and a revoked one stops working', async (t) => {
  const rows = await h.db.query<{ token_hash: string; user_id: string }>(
    'select token_hash, user_id from api_token order by user_id',
  );
  t.same(
    rows.map((r) => r.user_id),
    ['alice', 'alice', 'bob', 'bob'],
    'an agent and a person token each',
  );
  for (const r of rows) {
    for (const plain of [h.alice, h.bob, h.alicePerson, h.bobPerson]) t.not(r.token_hash, plain);
  }
  t.ok(rows.some((r) => r.token_hash === createHash('sha256').update(h.bob).digest('hex')));
  const { createApiToken } = await import('../../src/store/index.js');
  const extra = (await createApiToken(h.db, 'carol')).token;
  t.equal((await h.json(extra, 'GET', '/v1/workspaces')).status, 200);
  t.equal(await revokeApiToken(h.db, extra), true);
  const after = await h.json<{ errorCode: string }>(extra, 'GET', '/v1/workspaces');
  t.equal(after.status, 401);
  t.equal(after.body.errorCode, 'unauthenticated');
});

t.test('unknown routes and methods', async (t) => {
  const none = await h.json<{ errorCode: string }>(h.alice, 'GET', '/v1/nothing-here');
  t.equal(none.status, 404);
  t.equal(none.body.errorCode, 'not_found');
  const method = await h.call(h.alice, '/v1/workspaces', { method: 'DELETE' });
  t.equal(method.status, 405);
  t.equal(method.headers.get('allow'), 'GET');
  t.equal(((await method.json()) as { errorCode: string }).errorCode, 'invalid_arguments');
});

t.test('bodies are capped: 64 KiB for runs, 48 MiB for dispatch', async (t) => {
  const big = await h.call(h.alice, '/v1/runs', {
    method: 'POST',
    body: JSON.stringify({ conversationId: 'x'.repeat(70 * 1024) }),
  });
  t.equal(big.status, 413);
  t.equal(((await big.json()) as { errorCode: string }).errorCode, 'payload_too_large');

  const run = await h.json<{ run: { id: string } }>(h.alice, 'POST', '/v1/runs', {});
  const runId = run.body.run.id;
  // 2 MiB of content is over the 64 KiB cap but well within dispatch's.
  const content = 'a'.repeat(2 * 1024 * 1024);
  const ok = await h.json<{ ok: boolean }>(
    h.alice,
    'POST',
    '/v1/dispatch',
    envelope(runId, 'fs_write', { path: 'big.txt', content }),
  );
  t.equal(ok.status, 200);
  t.equal(ok.body.ok, true, 'a 2 MiB dispatch body is accepted');

  const huge = await h.call(h.alice, '/v1/dispatch', {
    method: 'POST',
    body: JSON.stringify(envelope(runId, 'fs_write', { path: 'x', content: 'b'.repeat(49 << 20) })),
  });
  t.equal(huge.status, 413, 'a 49 MiB dispatch body is refused');
  t.equal(((await huge.json()) as { errorCode: string }).errorCode, 'payload_too_large');

  // Without a declared length the cap holds as the body streams in.
  const chunks = new ReadableStream({
    start(controller) {
      for (let i = 0; i < 20; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(8192)));
      controller.close();
    },
  });
  const streamed = await h.call(h.alice, '/v1/runs', {
    method: 'POST',
    body: chunks,
    duplex: 'half',
  } as RequestInit);
  t.equal(streamed.status, 413);
});

t.test('bad JSON and bad fields answer 400 invalid_arguments naming the field', async (t) => {
  const cases: [string, string, string, string][] = [
    ['POST', '/v1/runs', '{not json', 'body'],
    ['POST', '/v1/runs', '[]', 'body'],
    ['POST', '/v1/runs', '{"owner":"bob"}', 'owner'],
    ['POST', '/v1/runs', '{"retentionMs":-5}', 'retentionMs'],
    ['POST', '/v1/runs', '{"conversationId":7}', 'conversationId'],
    ['POST', '/v1/dispatch', '{oops', 'body'],
    ['POST', '/v1/runs/run-x/end', '{"status":"done"}', 'status'],
  ];
  for (const [method, path, body, field] of cases) {
    const res = await h.call(h.alice, path, { method, body });
    const answer = (await res.json()) as { errorCode: string; message: string };
    t.equal(res.status, 400, `${path} ${body}`);
    t.equal(answer.errorCode, 'invalid_arguments');
    t.match(answer.message, field);
  }
  const ws = await h.json<{ message: string }>(
    h.alice,
    'GET',
    '/v1/workspaces?includeReleased=maybe',
  );
  t.equal(ws.status, 400);
  t.match(ws.body.message, 'includeReleased');
});
