import { createHash, randomBytes } from 'node:crypto';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import t from 'tap';
import { ClientError, WorkbenchClient } from '../../src/client/index.js';
import { startApiHarness } from './api-support.js';

/**
 * Files as byte streams through the API (`PUT`/`GET /v1/runs/:runId/files`) and the
 * upload parts of `fs_write` they are made of, on a real workbench host (Postgres,
 * bubblewrap): a file appears whole or not at all, and only to its run's owner.
 */

const h = await startApiHarness(t);

const alice = new WorkbenchClient({ baseUrl: h.url, token: h.alice });
const bob = new WorkbenchClient({ baseUrl: h.url, token: h.bob });
const dispatch = (runId: string, action: string, args: object) =>
  h.dispatch(h.alice, runId, action, args);

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** The durable manifest's row of a path, or undefined. */
async function manifestRow(runId: string, path: string) {
  const rows = await h.db.query<{ size: string; hash: string }>(
    'select size, hash from workspace_file where run_id = $1 and path = $2',
    [runId, path],
  );
  return rows[0];
}

/** The files staged for a run's uploads on the host. */
async function staged(runId: string): Promise<string[]> {
  return readdir(join(h.root, '.uploads', runId)).catch(() => []);
}

t.test('a 20 MiB stream in, the same bytes out, durable before the answer', async (t) => {
  const run = await alice.createRun();
  const bytes = randomBytes(20 * 1024 * 1024 + 17);
  // Sent as a stream of 1 MiB chunks, never as one body.
  const source = new PassThrough();
  const sent = alice.uploadFile(run.id, 'data/blob.bin', source);
  for (let at = 0; at < bytes.length; at += 1 << 20)
    source.write(bytes.subarray(at, at + (1 << 20)));
  source.end();
  const written = await sent;
  t.same(written.path, 'data/blob.bin');
  t.equal(written.size, bytes.length);
  t.same(written.upload, { id: written.upload!.id, staged: bytes.length, complete: true });
  const row = await manifestRow(run.id, 'data/blob.bin');
  t.equal(Number(row?.size), bytes.length, 'in the durable manifest when the answer came');
  t.equal(row?.hash, sha(bytes));
  t.same(await staged(run.id), [], 'nothing left staged');

  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const read = await alice.downloadFile(run.id, 'data/blob.bin', { to: out });
  t.equal(read.bytes, bytes.length);
  t.equal(read.sha256, sha(bytes));
  t.ok(Buffer.concat(chunks).equals(bytes), 'byte for byte');

  // Replacing: a second upload to the same path replaces the file whole.
  await alice.uploadFile(run.id, 'data/blob.bin', Buffer.from('short'));
  const again = await h.call(h.alice, `/v1/runs/${run.id}/files?path=data/blob.bin`);
  t.equal(again.status, 200);
  t.equal(again.headers.get('content-length'), '5');
  t.equal(await again.text(), 'short');

  const empty = await alice.uploadFile(run.id, 'empty.txt', Buffer.alloc(0), { mode: '600' });
  t.equal(empty.size, 0);
  const listing = await dispatch(run.id, 'exec', { command: 'stat -c %a empty.txt' });
  t.equal(listing.payload.stdout, '600\n', 'the mode asked for');
});

t.test('upload parts: staged out of sight, placed whole by the last', async (t) => {
  const run = await alice.createRun();
  const part = (offset: number, content: string, extra: object = {}) =>
    dispatch(run.id, 'fs_write', {
      path: 'out/report.txt',
      content,
      upload: { id: 'upload-one', offset, ...extra },
    });
  const first = await part(0, 'abc');
  t.same(first, {
    ok: true,
    payload: { path: 'out/report.txt', upload: { id: 'upload-one', staged: 3, complete: false } },
  });
  const hidden = await dispatch(run.id, 'exec', { command: 'ls -A; ls -A out 2>&1 || true' });
  t.notMatch(hidden.payload.stdout, /report|upload/, 'no partial file for commands to see');
  const read = await dispatch(run.id, 'fs_read', { path: 'out/report.txt' });
  t.equal(read.errorCode, 'path_not_found');
  t.equal(await manifestRow(run.id, 'out/report.txt'), undefined, 'nor in the durable copy');

  const skipped = await part(5, 'xyz');
  t.equal(skipped.errorCode, 'invalid_arguments');
  t.same(skipped.payload, { uploadId: 'upload-one', staged: 3 }, 'says where to go on');
  t.match(skipped.message, 'next part goes at offset 3');

  const last = await part(3, 'def', { complete: true, size: 6 });
  t.same(last.payload, {
    path: 'out/report.txt',
    bytesWritten: 6,
    size: 6,
    upload: { id: 'upload-one', staged: 6, complete: true },
    version: 1,
  });
  t.equal(
    (await dispatch(run.id, 'fs_read', { path: 'out/report.txt' })).payload.content,
    'abcdef',
  );
  t.same(await staged(run.id), []);

  // Starting again at offset 0 drops what was staged.
  await part(0, 'one');
  await part(0, 'two');
  const restarted = await part(3, '!', { complete: true });
  t.equal(restarted.ok, true);
  t.equal((await dispatch(run.id, 'fs_read', { path: 'out/report.txt' })).payload.content, 'two!');
});

t.test('an upload that cannot complete leaves nothing', async (t) => {
  const run = await alice.createRun();
  const upload = (args: object) => dispatch(run.id, 'fs_write', args);
  await upload({ path: 'a.txt', content: 'abc', upload: { id: 'upload-size', offset: 0 } });
  const wrongSize = await upload({
    path: 'a.txt',
    content: 'd',
    upload: { id: 'upload-size', offset: 3, complete: true, size: 10 },
  });
  t.equal(wrongSize.errorCode, 'invalid_arguments');
  t.match(wrongSize.message, 'staged 4 bytes but its last part says the file has 10');
  t.equal(
    (await upload({ path: 'a.txt', content: 'x', upload: { id: 'upload-size', offset: 4 } }))
      .errorCode,
    'invalid_arguments',
    'the stage is gone',
  );
  t.equal((await dispatch(run.id, 'fs_read', { path: 'a.txt' })).errorCode, 'path_not_found');

  const withAppend = await upload({
    path: 'a.txt',
    content: 'x',
    append: true,
    upload: { id: 'upload-append', offset: 0, complete: true },
  });
  t.equal(withAppend.errorCode, 'invalid_arguments');
  t.match(withAppend.message, 'append cannot be combined with upload');

  const badId = await upload({ path: 'a.txt', content: '', upload: { id: '../x', offset: 0 } });
  t.equal(badId.errorCode, 'invalid_arguments', 'an id is never a path');

  // A link out of the workspace as a parent: the file never lands outside.
  await dispatch(run.id, 'exec', { command: `ln -s ${h.base} escape && mkdir real` });
  const out = await upload({
    path: 'escape/planted.txt',
    content: 'x',
    upload: { id: 'upload-escape', offset: 0, complete: true },
  });
  t.equal(out.errorCode, 'invalid_path');
  await t.rejects(lstat(join(h.base, 'planted.txt')), { code: 'ENOENT' });
  const onDir = await upload({
    path: 'real',
    content: 'x',
    upload: { id: 'upload-dir', offset: 0, complete: true },
  });
  t.equal(onDir.errorCode, 'invalid_path', 'a directory is not replaced');
  t.same(await staged(run.id), []);
});

t.test('the routes: owner only, clear refusals', async (t) => {
  const run = await alice.createRun();
  await alice.uploadFile(run.id, 'mine.txt', Buffer.from('secret'));
  await t.rejects(bob.uploadFile(run.id, 'mine.txt', Buffer.from('theirs')), {
    code: 'not_found',
  });
  await t.rejects(bob.downloadFile(run.id, 'mine.txt', { to: new PassThrough() }), {
    code: 'not_found',
  });
  const kept = await h.call(h.alice, `/v1/runs/${run.id}/files?path=mine.txt`);
  t.equal(await kept.text(), 'secret', "another user's write changed nothing");

  const missing = await h.call(h.alice, `/v1/runs/${run.id}/files?path=nope.txt`);
  t.equal(missing.status, 404);
  t.match(await missing.json(), { ok: false, errorCode: 'path_not_found' });
  const noPath = await h.call(h.alice, `/v1/runs/${run.id}/files`, { method: 'PUT', body: 'x' });
  t.equal(noPath.status, 400);
  t.match(await noPath.json(), { errorCode: 'invalid_arguments', message: /path/ });
  const escaping = await h.call(h.alice, `/v1/runs/${run.id}/files?path=../x`, {
    method: 'PUT',
    body: 'x',
  });
  t.equal(escaping.status, 400);
  t.match(await escaping.json(), { errorCode: 'invalid_path' });
  const err = await alice.uploadFile(run.id, '/etc/passwd', Buffer.from('x')).catch((e) => e);
  t.ok(err instanceof ClientError);
  t.equal((err as ClientError).code, 'invalid_path');
});
