import { lstat, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { FsObjectStore } from '../../../src/objects/index.js';
import { hydrateWorkspace, reconcileWorkspace } from '../../../src/workbench/sync/index.js';
import {
  filesOf,
  freshRoot,
  newRun,
  openTestDb,
  readTree,
  sha256,
  syncAs,
  syncDeps,
  writeTree,
} from './fixtures.js';

const { db } = await openTestDb(t);

async function synced(t: Test, files: Parameters<typeof writeTree>[1]) {
  const baseDir = await freshRoot(t);
  const objects = new FsObjectStore({ baseDir });
  const runId = await newRun(db);
  const root = await freshRoot(t);
  const source = join(root, 'source');
  await writeTree(source, files);
  const deps = syncDeps(db, objects);
  const result = await syncAs(deps, { runId, dir: source, nodeId: 'node-a' });
  return { baseDir, objects, runId, root, source, deps, result };
}

t.test('hydrate checks every download against the manifest hash', async (t) => {
  const { baseDir, runId, root, deps } = await synced(t, { 'good.txt': 'good', 'bad.txt': 'bad!' });
  // Same size, other bytes: only the hash can tell.
  await writeFile(join(baseDir, 'objects', 'runs', runId, 'blobs', sha256('bad!')), 'evil');
  const dir = join(root, runId);
  await t.rejects(hydrateWorkspace(deps, { runId, dir }), {
    code: 'unavailable',
    payload: { runId, reason: 'blob_corrupt' },
  });
  await t.rejects(lstat(join(dir, 'bad.txt')), { code: 'ENOENT' }, 'the bad file never lands');
  t.same(await readdir(join(root, '.memql-sync-tmp')), []);
});

t.test('hydrate reports content missing from the store', async (t) => {
  const { objects, runId, root, deps } = await synced(t, { 'a.txt': 'a' });
  await objects.deleteMany([`runs/${runId}/blobs/${sha256('a')}`]);
  await t.rejects(hydrateWorkspace(deps, { runId, dir: join(root, runId) }), {
    code: 'unavailable',
    payload: { runId, reason: 'blob_missing' },
  });
});

t.test('reconcile writes through no link and swaps files and directories', async (t) => {
  const { runId, root, source, deps } = await synced(t, {
    'sub/file.txt': 'inside',
    'was-dir': 'now a file',
    'was-file/inner.txt': 'now a directory',
    'link-here': 'a file where a link was',
  });
  const outside = join(root, 'outside');
  await mkdir(outside);
  const dir = join(root, runId);
  await mkdir(dir);
  await symlink(outside, join(dir, 'sub'));
  await writeTree(dir, { 'was-dir/old.txt': 'old', 'was-file': 'old' });
  await symlink(join(outside, 'target.txt'), join(dir, 'link-here'));

  const r = await reconcileWorkspace(deps, {
    runId,
    dir,
    nodeId: 'node-b',
    base: undefined,
  });
  t.match(r, { mode: 'full', downloaded: 4 });
  t.same(filesOf(await readTree(dir)), filesOf(await readTree(source)));
  t.ok((await lstat(join(dir, 'sub'))).isDirectory(), 'the link became a real directory');
  t.same(await readdir(outside), [], 'nothing was written outside');
  t.equal(await readFile(join(dir, 'link-here'), 'utf8'), 'a file where a link was');
});

t.test(
  'reconcile of a missing directory hydrates it; matching files are not rewritten',
  async (t) => {
    const { runId, root, source, deps } = await synced(t, { 'a.txt': 'a', 'b/c.txt': 'c' });
    const dir = join(root, runId);
    const first = await reconcileWorkspace(deps, {
      runId,
      dir,
      nodeId: 'node-b',
      base: undefined,
    });
    t.match(first, { mode: 'full', downloaded: 2, removed: 0, kept: 0 });
    t.same(filesOf(await readTree(dir)), filesOf(await readTree(source)));

    const inode = (await lstat(join(dir, 'a.txt'))).ino;
    deps.hasher.seen.length = 0;
    const second = await reconcileWorkspace(deps, {
      runId,
      dir,
      nodeId: 'node-b',
      base: undefined,
    });
    t.match(second, { mode: 'full', downloaded: 0, removed: 0, kept: 2, hashed: 0 });
    t.equal((await lstat(join(dir, 'a.txt'))).ino, inode, 'the file was left in place');
  },
);

t.test('hydrate replaces a link where a directory belongs instead of following it', async (t) => {
  const { runId, root, deps } = await synced(t, { 'sub/deep/file.txt': 'inside' });
  const outside = join(root, 'outside');
  await mkdir(join(outside, 'deep'), { recursive: true });
  const dir = join(root, runId);
  await mkdir(dir);
  await symlink(outside, join(dir, 'sub'));
  await hydrateWorkspace(deps, { runId, dir });
  t.ok((await lstat(join(dir, 'sub'))).isDirectory());
  t.equal(await readFile(join(dir, 'sub/deep/file.txt'), 'utf8'), 'inside');
  t.same(await readdir(join(outside, 'deep')), [], 'nothing was written outside');
});
