import t from 'tap';
import { ClientError, WorkbenchClient } from '../../src/client/index.js';
import { memqlAs } from '../support/local-node.js';
import { listKeys } from '../workbench/sync/fixtures.js';
import { type Json, startApiHarness } from './api-support.js';

/**
 * A run's history over HTTP on a live API (Postgres, bwrap): the version routes, the
 * TypeScript client's `versions`, and `memql versions | diff | checkpoint | restore |
 * fork` as a real process. Another user's run is 404 everywhere, the fork included.
 */

const h = await startApiHarness(t);
const client = new WorkbenchClient({ baseUrl: h.url, token: h.alice });
const memql = (...argv: string[]) => memqlAs(h.url, h.alice, ...argv);

t.test('the routes: list, diff, checkpoints, restore, fork', async (t) => {
  const runId = await h.newRun(h.alice);
  await h.dispatch(h.alice, runId, 'fs_write', { path: 'a.txt', content: 'one' });
  await h.dispatch(h.alice, runId, 'fs_write', { path: 'b.txt', content: 'two' });
  const base = `/v1/runs/${runId}`;

  const listed = await h.json<Json>(h.alice, 'GET', `${base}/versions?limit=1`);
  t.equal(listed.status, 200);
  t.match(listed.body, { current: 2, next: 2, versions: [{ version: 2, action: 'fs_write' }] });
  const diff = await h.json<Json>(h.alice, 'GET', `${base}/versions/diff?from=1&to=2`);
  t.match(diff.body, { added: 1, entries: [{ path: 'b.txt', change: 'added' }] });
  t.equal((await h.json(h.alice, 'GET', `${base}/versions/diff`)).status, 400, 'from is needed');

  const labelled = await h.json<Json>(h.alice, 'POST', `${base}/checkpoints`, {
    label: 'first',
    version: 1,
  });
  t.same([labelled.status, labelled.body.version.label], [201, 'first']);
  const taken = await h.json<Json>(h.alice, 'POST', `${base}/checkpoints`, { label: 'first' });
  t.same([taken.status, taken.body.errorCode], [409, 'label_in_use']);
  const badLabel = await h.json<Json>(h.alice, 'POST', `${base}/checkpoints`, { label: '12' });
  t.same([badLabel.status, badLabel.body.errorCode], [400, 'invalid_arguments']);

  const restored = await h.json<Json>(h.alice, 'POST', `${base}/restore`, { label: 'first' });
  t.equal(restored.status, 200);
  t.match(restored.body, { version: 3, restoredFrom: 1, removed: 1 });
  const gone = await h.json<Json>(h.alice, 'POST', `${base}/restore`, { version: 99 });
  t.same([gone.status, gone.body.errorCode], [404, 'version_not_found']);
  const both = await h.json<Json>(h.alice, 'POST', `${base}/restore`, { version: 1, label: 'x' });
  t.equal(both.status, 400, 'version or label, not both');

  const keys = await listKeys(h.objects, '');
  const forked = await h.json<Json>(h.alice, 'POST', `${base}/fork`, { version: 2 });
  t.equal(forked.status, 201);
  t.match(forked.body, { forkedFrom: { runId, version: 2 }, files: 2, run: { status: 'running' } });
  t.same(await listKeys(h.objects, ''), keys, 'the fork wrote no object');
  const forkId = forked.body.run.id as string;
  const read = await h.dispatch(h.alice, forkId, 'fs_read', { path: 'b.txt' });
  t.match(read, { ok: true, payload: { content: 'two' } });
  const noVersion = await h.json<Json>(h.alice, 'POST', `${base}/fork`, { label: 'nope' });
  t.same([noVersion.status, noVersion.body.errorCode], [404, 'version_not_found']);

  const manifest = await h.json<Json>(h.alice, 'GET', `${base}/manifest?version=2`);
  t.match(manifest, {
    status: 200,
    body: { version: 2, next: null, files: [{ path: 'a.txt', size: 3 }, { path: 'b.txt' }] },
  });
  const paged = await h.json<Json>(h.alice, 'GET', `${base}/manifest?version=2&limit=1`);
  t.same([paged.body.files.length, paged.body.next], [1, 'a.txt']);
  const current = await h.json<Json>(h.alice, 'GET', `${base}/manifest`);
  t.same(
    [current.body.version, current.body.files.map((f: { path: string }) => f.path)],
    [3, ['a.txt']],
    'the current version by default: the restore took b.txt away',
  );
  t.equal((await h.json(h.alice, 'GET', `${base}/manifest?version=99`)).status, 404);
  const removed = await h.json<Json>(h.alice, 'DELETE', `${base}/checkpoints/first`);
  t.match(removed, { status: 200, body: { version: { version: 1, label: null } } });

  // Bob sees none of it, and cannot fork it.
  for (const [method, path, body] of [
    ['GET', `${base}/versions`],
    ['GET', `${base}/versions/diff?from=1`],
    ['POST', `${base}/checkpoints`, { label: 'mine' }],
    ['POST', `${base}/restore`, { version: 1 }],
    ['POST', `${base}/fork`, {}],
    ['GET', `${base}/manifest`],
  ] as const) {
    const answer = await h.json(h.bob, method, path, body);
    t.equal(answer.status, 404, `${method} ${path} is not bob's`);
  }
});

t.test('the client', async (t) => {
  const run = await client.createRun();
  await client.dispatch({
    action: 'fs_write',
    args: { path: 'n.txt', content: 'x' },
    runId: run.id,
    agentId: 'a',
    taskId: 't',
  });
  const page = await client.versions.list(run.id);
  t.match(page, { current: 1, versions: [{ version: 1 }], next: null });
  const label = await client.versions.checkpoint(run.id, 'start');
  t.equal(label.label, 'start');
  const fork = await client.versions.fork(run.id, { label: 'start' });
  t.match(fork, { forkedFrom: { runId: run.id, version: 1 }, files: 1 });
  const refused = await client.versions.restore(run.id, { version: 7 }).catch((err) => err);
  t.ok(refused instanceof ClientError);
  t.equal((refused as ClientError).code, 'version_not_found');
});

t.test('memql versions, diff, checkpoint, restore and fork', async (t) => {
  const runId = await h.newRun(h.alice);
  await h.dispatch(h.alice, runId, 'fs_write', { path: 'plan.md', content: 'draft' });
  await h.dispatch(h.alice, runId, 'exec', { command: 'printf final > plan.md && touch done' });

  const versions = await memql('versions', runId);
  t.equal(versions.code, 0, versions.stderr);
  t.match(versions.stdout, /^VERSION\s+CREATED\s+MADE BY/);
  t.match(versions.stdout, /\n2 .* command [0-9a-f-]{36} /);
  t.match(versions.stdout, /\n1 .* fs_write/);

  const diff = await memql('diff', runId, '1');
  t.equal(diff.code, 0, diff.stderr);
  t.equal(diff.stdout, 'A done\nM plan.md\n1 -> 2: 1 added, 1 changed, 0 removed\n');

  const checkpoint = await memql('checkpoint', runId, 'draft', '--version', '1');
  t.same([checkpoint.code, checkpoint.stdout], [0, 'version 1 labelled draft\n']);
  const restore = await memql('restore', runId, 'draft');
  t.same(
    [restore.code, restore.stdout],
    [0, 'restored version 1 as version 3: 0 added, 1 changed, 1 removed\n'],
  );
  const fork = await memql('fork', runId, '2');
  t.equal(fork.code, 0, fork.stderr);
  const forkId = fork.stdout.trim();
  const read = await h.dispatch(h.alice, forkId, 'fs_read', { path: 'plan.md' });
  t.match(read, { ok: true, payload: { content: 'final' } }, 'the fork is at version 2');

  const missing = await memql('restore', runId, '42');
  t.equal(missing.code, 1);
  t.match(missing.stderr, /version_not_found/);
  const usage = await memql('diff', runId, 'latest');
  t.equal(usage.code, 2, 'a version is a number');
});
