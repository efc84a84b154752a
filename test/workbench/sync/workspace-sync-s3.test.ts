import { readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { hydrateWorkspace } from '../../../src/workbench/sync/index.js';
import { startS3Server } from '../../support/s3-server.js';
import { s3TestStore } from '../../support/s3-store.js';
import {
  filesOf,
  freshRoot,
  listKeys,
  manifestView,
  newRun,
  openTestDb,
  readTree,
  syncAs,
  syncDeps,
  writeTree,
} from './fixtures.js';
import { workspaceSyncSuite } from './suite.js';

const { db } = await openTestDb(t);
const server = await startS3Server({ bucket: 'memql-sync' });
t.teardown(() => server.stop());

workspaceSyncSuite(t, { db, makeStore: async (t) => s3TestStore(t, server) });

t.test(
  'a stopped S3 server fails sync and hydrate and leaves the manifest as it was',
  async (t) => {
    const doomed = await startS3Server({ bucket: 'memql-doomed' });
    t.teardown(() => doomed.stop());
    const objects = s3TestStore(t, doomed, true);
    const deps = syncDeps(db, objects);
    const runId = await newRun(db);
    const root = await freshRoot(t);
    const dir = join(root, runId);
    await writeTree(dir, { 'a.txt': 'first', 'b.txt': 'second' });
    await syncAs(deps, { runId, dir, nodeId: 'node-a' });
    const before = await manifestView(db, runId);

    await doomed.stop();
    await writeFile(join(dir, 'a.txt'), 'first, changed while the store is down');
    await writeTree(dir, { 'c.txt': 'new' });
    await rm(join(dir, 'b.txt'));
    const failure = { code: 'unavailable', payload: { runId, reason: 'object_store' } };
    await t.rejects(syncAs(deps, { runId, dir, nodeId: 'node-a' }), failure);
    t.same(await manifestView(db, runId), before, 'same version, same rows');

    const elsewhere = join(root, 'elsewhere');
    await t.rejects(hydrateWorkspace(deps, { runId, dir: elsewhere }), failure);
    t.same(await readdir(join(root, '.memql-sync-tmp')), [], 'no partial download left');
  },
);

t.test('a 1,000-file workspace on S3 syncs, re-syncs without reading, and hydrates', async (t) => {
  const objects = s3TestStore(t, server);
  const deps = syncDeps(db, objects, { concurrency: 16 });
  const runId = await newRun(db);
  const dir = join(await freshRoot(t), runId);
  const files: Record<string, string> = {};
  for (let i = 0; i < 1000; i++)
    files[`d${i % 20}/f ${i}.txt`] = `s3 file ${i}\n`.repeat(1 + (i % 30));
  await writeTree(dir, files);

  let started = Date.now();
  const first = await syncAs(deps, { runId, dir, nodeId: 'node-a' });
  t.match(first, { version: 1, changed: 1000, hashed: 1000, uploaded: 1000 });
  t.equal((await listKeys(objects, `runs/${runId}/blobs/`)).length, 1000);
  t.comment(`first sync: ${Date.now() - started} ms`);

  // Without reading: no file hashed, nothing uploaded (what it costs is the bench's job).
  deps.hasher.seen.length = 0;
  started = Date.now();
  const second = await syncAs(deps, { runId, dir, nodeId: 'node-a' });
  t.match(second, { version: 1, changed: 0, uploaded: 0, hashed: 0, unchanged: 1000 });
  t.same(deps.hasher.seen, [], 'no file was read to hash it');
  t.comment(`re-sync: ${Date.now() - started} ms`);

  const before = filesOf(await readTree(dir));
  await rm(dir, { recursive: true });
  started = Date.now();
  t.equal((await hydrateWorkspace(deps, { runId, dir })).downloaded, 1000);
  t.comment(`hydrate: ${Date.now() - started} ms`);
  t.same(filesOf(await readTree(dir)), before);
});
