import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { removeTree } from '../../../src/files/index.js';
import { FsObjectStore } from '../../../src/objects/index.js';
import { hydrateWorkspace, reconcileWorkspace } from '../../../src/workbench/sync/index.js';
import { makeDeepTree } from '../../support/deep-tree.js';
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

async function fsStore(t: Parameters<typeof freshRoot>[0], fsync = true) {
  return new FsObjectStore({ baseDir: await freshRoot(t), fsync });
}

workspaceSyncSuite(t, { db, makeStore: (t) => fsStore(t) });

t.test('a missing directory is refused, not synced as empty', async (t) => {
  const objects = await fsStore(t);
  const deps = syncDeps(db, objects);
  const runId = await newRun(db);
  const dir = join(await freshRoot(t), runId);
  await writeTree(dir, { 'a.txt': 'a' });
  await syncAs(deps, { runId, dir, nodeId: 'node-a' });
  await rm(dir, { recursive: true });
  await t.rejects(syncAs(deps, { runId, dir, nodeId: 'node-a' }), /is missing/);
  t.same(Object.keys((await manifestView(db, runId)).files), ['a.txt']);
});

t.test(
  'hydrate gives files and directories to the configured owner',
  { skip: process.getuid?.() !== 0 && 'chown to another uid needs root' },
  async (t) => {
    const objects = await fsStore(t);
    const runId = await newRun(db);
    const root = await freshRoot(t);
    const source = join(root, 'source');
    await writeTree(source, { 'top.txt': 'top', 'a/b/deep.txt': 'deep' });
    await syncAs(syncDeps(db, objects), { runId, dir: source, nodeId: 'node-a' });

    const owner = { uid: 10001, gid: 10001 };
    const dir = join(root, runId);
    await hydrateWorkspace(syncDeps(db, objects, { owner }), { runId, dir });
    for (const path of ['', 'top.txt', 'a', 'a/b', 'a/b/deep.txt']) {
      const st = await stat(join(dir, path));
      t.same([st.uid, st.gid], [10001, 10001], `owner of "${path || '.'}"`);
    }
  },
);

t.test('a 1,000-file workspace syncs, re-syncs without reading, and hydrates', async (t) => {
  const objects = await fsStore(t, false);
  const deps = syncDeps(db, objects, { concurrency: 16 });
  const runId = await newRun(db);
  const root = await freshRoot(t);
  const dir = join(root, runId);
  const files: Record<string, string> = {};
  for (let i = 0; i < 1000; i++) {
    files[`d${i % 10}/sub${i % 7}/file-${i}.txt`] = `file ${i} `.repeat(1 + (i % 50));
  }
  await writeTree(dir, files);

  let started = Date.now();
  const first = await syncAs(deps, { runId, dir, nodeId: 'node-a' });
  t.match(first, { version: 1, changed: 1000, uploaded: 1000, hashed: 1000 });
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
  const hydrated = await hydrateWorkspace(deps, { runId, dir });
  t.equal(hydrated.downloaded, 1000);
  t.same(filesOf(await readTree(dir)), before);
  const third = await syncAs(deps, { runId, dir, nodeId: 'node-a' });
  t.match(third, { version: 1, uploaded: 0, hashed: 0, unchanged: 1000 });
  t.same(await readdir(join(root, '.memql-sync-tmp')), []);
});

t.test(
  'a tree deeper than PATH_MAX is refused in the result; the rest syncs; a full reconcile removes it',
  async (t) => {
    const objects = await fsStore(t);
    const deps = syncDeps(db, objects);
    const runId = await newRun(db);
    const dir = join(await freshRoot(t), runId);
    t.teardown(() => removeTree(dir));
    await writeTree(dir, { 'a.txt': 'a', 'deep/beside.txt': 'beside' });
    makeDeepTree(join(dir, 'deep'), 45);

    const r = await syncAs(deps, { runId, dir, nodeId: 'node-a' });
    t.match(r, { changed: 2, refused: { total: 1, entries: [{ reason: 'path_too_long' }] } });
    t.match(r.refused.entries[0]!.path, /^deep\/d+\/.*…/, 'the path is shortened');
    t.same(Object.keys((await manifestView(db, runId)).files), ['a.txt', 'deep/beside.txt']);

    const again = await syncAs(deps, { runId, dir, nodeId: 'node-a' });
    t.match(
      again,
      { changed: 0, deleted: 0, refused: { total: 1 } },
      'reported again, nothing lost',
    );

    // A copy this node knows nothing of is compared in full: the unreachable branch goes.
    const full = await reconcileWorkspace(deps, { runId, dir, nodeId: 'node-b', base: undefined });
    t.match(full, { mode: 'full', removed: 1 });
    const left = await readTree(dir);
    t.same(
      Object.keys(left).filter((p) => left[p]!.kind !== 'dir'),
      ['a.txt', 'deep/beside.txt'],
      'the files stay; what was out of reach is gone (empty directories stay, as always)',
    );
    t.match(await syncAs(deps, { runId, dir, nodeId: 'node-b' }), { refused: { total: 0 } });
  },
);
