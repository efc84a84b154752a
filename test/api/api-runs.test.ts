import t from 'tap';
import { WorkbenchClient } from '../../src/client/index.js';
import { createApiToken } from '../../src/store/index.js';
import { envelope, startApiHarness } from './api-support.js';

const h = await startApiHarness(t);

interface RunBody {
  run: {
    id: string;
    status: string;
    ownerUserId: string;
    conversationId: string | null;
    createdAt: string;
    retentionExpiresAt: string | null;
  };
}
interface WorkspacesBody {
  workspaces: {
    id: string;
    runId: string;
    nodeId: string;
    status: string;
    releasedReason: string | null;
    releasedReasonText: string | null;
    createdAt: string;
    releasedAt: string | null;
  }[];
}

async function newRun(token: string, body: Record<string, unknown> = {}) {
  const res = await h.json<RunBody>(token, 'POST', '/v1/runs', body);
  if (res.status !== 201) throw new Error(`create run: ${res.status}`);
  return res.body.run;
}

async function dispatch(token: string, runId: string, action: string, args: object) {
  return (
    await h.json<{ ok: boolean; errorCode?: string; payload?: Record<string, unknown> }>(
      token,
      'POST',
      '/v1/dispatch',
      envelope(runId, action, args as Record<string, unknown>),
    )
  ).body;
}

t.test('create and read a run; the caller is its owner', async (t) => {
  const created = await h.json<RunBody>(h.alice, 'POST', '/v1/runs', {
    conversationId: 'conv-1',
    retentionMs: 3_600_000,
  });
  t.equal(created.status, 201);
  const run = created.body.run;
  t.match(run.id, /^run-[0-9a-f-]{36}$/);
  t.equal(run.status, 'running');
  t.equal(run.ownerUserId, 'alice');
  t.equal(run.conversationId, 'conv-1');
  t.ok(Date.parse(run.createdAt) > 0);
  const expires = Date.parse(run.retentionExpiresAt ?? '');
  t.ok(expires > Date.now() + 3_500_000 && expires < Date.now() + 3_700_000, 'retention is set');

  const empty = await h.call(h.alice, '/v1/runs', { method: 'POST' });
  t.equal(empty.status, 201, 'an empty body makes a run with defaults');

  const read = await h.json<RunBody>(h.alice, 'GET', `/v1/runs/${run.id}`);
  t.equal(read.status, 200);
  t.same(read.body.run, run);
});

t.test("another user's run is not_found everywhere, and nothing happens to it", async (t) => {
  const run = await newRun(h.alice);
  t.equal((await dispatch(h.alice, run.id, 'fs_write', { path: 'a.txt', content: 'A' })).ok, true);

  const read = await h.json<{ errorCode: string }>(h.bob, 'GET', `/v1/runs/${run.id}`);
  t.equal(read.status, 404);
  t.equal(read.body.errorCode, 'not_found');
  const absent = await h.json<{ errorCode: string; message: string }>(
    h.bob,
    'GET',
    '/v1/runs/run-never-made',
  );
  t.equal(absent.status, 404);
  t.equal(
    absent.body.message.replace('run-never-made', run.id),
    (await h.json<{ message: string }>(h.bob, 'GET', `/v1/runs/${run.id}`)).body.message,
    'an absent run and another user’s read the same',
  );
  const end = await h.json(h.bob, 'POST', `/v1/runs/${run.id}/end`, { status: 'failed' });
  t.equal(end.status, 404);
  const del = await h.json(h.bob, 'DELETE', `/v1/runs/${run.id}`);
  t.equal(del.status, 404);
  const call = await dispatch(h.bob, run.id, 'fs_read', { path: 'a.txt' });
  t.same(call.ok, false);
  t.equal(call.errorCode, 'not_found', 'dispatch on it is refused without running');

  const still = await h.json<RunBody>(h.alice, 'GET', `/v1/runs/${run.id}`);
  t.equal(still.body.run.status, 'running', 'the run is untouched');
  const bobs = await h.json<WorkspacesBody>(h.bob, 'GET', '/v1/workspaces?includeReleased=true');
  t.same(bobs.body.workspaces, [], "bob's list never shows alice's workspaces");
  const alices = await h.json<WorkspacesBody>(h.alice, 'GET', '/v1/workspaces');
  t.ok(alices.body.workspaces.some((w) => w.runId === run.id));
});

t.test('the workspace list comes a page at a time, newest first', async (t) => {
  const { token: dora } = await createApiToken(h.db, 'dora');
  const runs: string[] = [];
  for (let i = 0; i < 5; i++) {
    const run = await newRun(dora);
    t.equal((await dispatch(dora, run.id, 'fs_write', { path: 'f.txt', content: 'x' })).ok, true);
    runs.push(run.id);
  }
  type Page = WorkspacesBody & { nextBefore: string | null };
  const seen: Page['workspaces'] = [];
  const sizes: number[] = [];
  let before: string | null = null;
  do {
    const query: string = `/v1/workspaces?limit=2${before === null ? '' : `&before=${before}`}`;
    const page: { status: number; body: Page } = await h.json<Page>(dora, 'GET', query);
    t.equal(page.status, 200);
    sizes.push(page.body.workspaces.length);
    seen.push(...page.body.workspaces);
    before = page.body.nextBefore;
  } while (before !== null && sizes.length < 10);
  t.same(sizes, [2, 2, 1], 'three pages, the last one short, and then no cursor');
  t.same(
    seen.map((w) => w.runId),
    [...runs].reverse(),
    'every workspace once, newest first',
  );

  const client = new WorkbenchClient({ baseUrl: h.url, token: dora });
  const first = await client.listWorkspacePage({ limit: 3 });
  t.equal(first.workspaces.length, 3);
  const rest = await client.listWorkspacePage({ limit: 3, before: first.nextBefore! });
  t.same(
    [...first.workspaces, ...rest.workspaces].map((w) => w.runId),
    [...runs].reverse(),
    'the client pages the same way',
  );
  t.equal(rest.nextBefore, null);

  const alices = await h.json<WorkspacesBody>(h.alice, 'GET', '/v1/workspaces?limit=1');
  const foreign = alices.body.workspaces[0]!.id;
  const refused = await h.json<{ errorCode: string; message: string }>(
    dora,
    'GET',
    `/v1/workspaces?before=${foreign}`,
  );
  t.equal(refused.status, 400, "another user's workspace is no cursor");
  t.equal(refused.body.errorCode, 'invalid_arguments');
  t.match(refused.body.message, /before.*nextBefore/);
  for (const bad of ['limit=0', 'limit=501', 'limit=x', 'before=']) {
    const res = await h.json<{ errorCode: string; message: string }>(
      dora,
      'GET',
      `/v1/workspaces?${bad}`,
    );
    t.equal(res.status, 400, bad);
    t.match(res.body.message, bad.split('=')[0]!, `${bad}: the message names the parameter`);
  }
});

t.test('ending a run releases its workspace; the released list says why', async (t) => {
  const run = await newRun(h.alice);
  t.equal((await dispatch(h.alice, run.id, 'fs_write', { path: 'f.txt', content: 'x' })).ok, true);
  const live = await h.json<WorkspacesBody>(h.alice, 'GET', '/v1/workspaces');
  const row = live.body.workspaces.find((w) => w.runId === run.id);
  t.equal(row?.status, 'provisioned');
  t.equal(row?.nodeId, 'node-api');

  const end = await h.json<{ run: RunBody['run']; released: boolean }>(
    h.alice,
    'POST',
    `/v1/runs/${run.id}/end`,
    { status: 'succeeded' },
  );
  t.equal(end.status, 200);
  t.equal(end.body.run.status, 'succeeded');
  t.equal(end.body.released, true);

  const again = await h.json<{ released: boolean }>(h.alice, 'POST', `/v1/runs/${run.id}/end`, {
    status: 'succeeded',
  });
  t.equal(again.status, 200, 'repeating the same end is fine');
  t.equal(again.body.released, false);
  const other = await h.json<{ errorCode: string }>(h.alice, 'POST', `/v1/runs/${run.id}/end`, {
    status: 'failed',
  });
  t.equal(other.status, 409, 'a different terminal status conflicts');
  t.equal(other.body.errorCode, 'run_ended');

  const liveAfter = await h.json<WorkspacesBody>(h.alice, 'GET', '/v1/workspaces');
  t.notOk(
    liveAfter.body.workspaces.some((w) => w.runId === run.id),
    'gone from the live list',
  );
  const all = await h.json<WorkspacesBody>(h.alice, 'GET', '/v1/workspaces?includeReleased=true');
  const released = all.body.workspaces.find((w) => w.runId === run.id);
  t.equal(released?.status, 'released');
  t.equal(released?.releasedReason, 'run_succeeded');
  t.equal(released?.releasedReasonText, 'run ended: succeeded');
  t.ok(released?.releasedAt);

  const after = await dispatch(h.alice, run.id, 'fs_read', { path: 'f.txt' });
  t.equal(after.errorCode, 'run_ended', 'calls for an ended run are refused');

  const abandoned = await newRun(h.alice);
  const ab = await h.json<{ released: boolean }>(h.alice, 'POST', `/v1/runs/${abandoned.id}/end`, {
    status: 'abandoned',
  });
  t.equal(ab.status, 200);
  t.equal(ab.body.released, false, 'a run that never had a workspace just changes status');
});

t.test('deleting a run removes its data and its artifacts', async (t) => {
  const run = await newRun(h.alice);
  t.equal(
    (await dispatch(h.alice, run.id, 'fs_write', { path: 'out/r.md', content: '# R\n' })).ok,
    true,
  );
  const promoted = await dispatch(h.alice, run.id, 'promote_artifact', { path: 'out/r.md' });
  t.equal(promoted.ok, true);
  const artifactId = String(promoted.payload?.artifactId);
  t.equal((await h.call(h.alice, `/v1/artifacts/${artifactId}/content`)).status, 200);

  const del = await h.json<{
    deleted: { objects: number; commands: number; workspaces: number; artifacts: number };
  }>(h.alice, 'DELETE', `/v1/runs/${run.id}`);
  t.equal(del.status, 200);
  t.equal(del.body.deleted.artifacts, 1);
  t.ok(del.body.deleted.objects >= 1, 'workspace bytes removed');
  t.equal(del.body.deleted.workspaces, 1);

  t.equal((await h.json(h.alice, 'GET', `/v1/runs/${run.id}`)).status, 404);
  const list = await h.json<{ artifacts: unknown[] }>(
    h.alice,
    'GET',
    `/v1/artifacts?runId=${run.id}`,
  );
  t.same(list.body.artifacts, []);
  t.equal((await h.call(h.alice, `/v1/artifacts/${artifactId}/content`)).status, 404);
  t.equal(await h.objects.head(`artifacts/${artifactId}`), null, 'the bytes are gone');
  t.equal((await h.objects.list(`runs/${run.id}/`)).items.length, 0);
  const all = await h.json<WorkspacesBody>(h.alice, 'GET', '/v1/workspaces?includeReleased=true');
  t.notOk(
    all.body.workspaces.some((w) => w.runId === run.id),
    'deleted workspaces are not listed',
  );
  t.equal((await h.json(h.alice, 'DELETE', `/v1/runs/${run.id}`)).status, 404);
});

t.test('listing runs: newest first, paged, one status, only the caller own', async (t) => {
  // A user of this test alone, so other tests' runs do not mix into the pages.
  const { token: carol } = await createApiToken(h.db, 'carol');
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await newRun(carol, { conversationId: `c${i}` })).id);
  const bobsRun = await newRun(h.bob);
  await h.json(carol, 'POST', `/v1/runs/${ids[1]}/end`, { status: 'failed' });

  type Page = { runs: { id: string; status: string }[]; nextBefore: string | null };
  const seen: string[] = [];
  let before: string | null = null;
  let pages = 0;
  do {
    const query: string = before === null ? '?limit=2' : `?limit=2&before=${before}`;
    const page = await h.json<Page>(carol, 'GET', `/v1/runs${query}`);
    t.equal(page.status, 200);
    t.ok(page.body.runs.length <= 2);
    seen.push(...page.body.runs.map((r) => r.id));
    before = page.body.nextBefore;
    pages++;
  } while (before !== null && pages < 10);
  t.same(seen, [...ids].reverse(), 'every run once, newest first, over three pages');
  t.equal(pages, 3);
  t.notOk(seen.includes(bobsRun.id), "bob's run is never listed for carol");

  const failed = await h.json<Page>(carol, 'GET', '/v1/runs?status=failed');
  t.same(
    failed.body.runs.map((r) => [r.id, r.status]),
    [[ids[1], 'failed']],
  );
  t.equal(failed.body.nextBefore, null);

  const bad = await h.json<{ errorCode: string; message: string }>(
    carol,
    'GET',
    '/v1/runs?status=done',
  );
  t.equal(bad.status, 400);
  t.equal(bad.body.errorCode, 'invalid_arguments');
  t.match(bad.body.message, /status: expected one of running, succeeded/);
  const foreignCursor = await h.json<{ errorCode: string }>(
    carol,
    'GET',
    `/v1/runs?before=${bobsRun.id}`,
  );
  t.equal(foreignCursor.status, 400, "another user's run is no cursor");
  t.equal(foreignCursor.body.errorCode, 'invalid_arguments');
  t.equal((await h.json(null, 'GET', '/v1/runs')).status, 401);
});
