/**
 * The workspace sync behaviours every object store must support, run against the
 * filesystem store and against a real S3-compatible server (s3rver).
 */

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmod,
  lstat,
  mkdir,
  readdir,
  readFile,
  rm,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import type { Test } from 'tap';
import { getBytes, type ObjectStore } from '../../../src/objects/index.js';
import type { Db } from '../../../src/store/index.js';
import { hydrateWorkspace, reconcileWorkspace } from '../../../src/workbench/sync/index.js';
import {
  baseOf,
  filesOf,
  freshRoot,
  listKeys,
  manifestView,
  newRun,
  readTree,
  sha256,
  syncAs,
  syncDeps,
  writeTree,
} from './fixtures.js';

/** What the suite runs on. */
export interface SyncSuiteEnv {
  db: Db;
  /** A store of its own for `t`, emptied at teardown. */
  makeStore: (t: Test) => Promise<ObjectStore>;
}

const UNICODE = 'notes/ünïcødé 日本 😀.txt';
const SPACED = 'my dir/a file with spaces.md';

export function workspaceSyncSuite(t: Test, env: SyncSuiteEnv): void {
  const { db } = env;

  async function setup(t: Test) {
    const objects = await env.makeStore(t);
    const runId = await newRun(db);
    const root = await freshRoot(t);
    const dir = join(root, runId);
    await mkdir(dir);
    return { objects, runId, root, dir, deps: syncDeps(db, objects) };
  }

  t.test('sync records manifest rows and content-addressed blobs', async (t) => {
    const { objects, runId, dir, deps } = await setup(t);
    const binary = randomBytes(3000);
    await writeTree(dir, {
      'a.txt': 'alpha',
      'copy-of-a.txt': 'alpha',
      'sub/tool.bin': { content: binary, mode: 0o755 },
      'sub/deeper/c.txt': { content: 'gamma', mode: 0o600 },
      empty: '',
      [UNICODE]: 'unicode',
      [SPACED]: 'spaces',
    });
    await mkdir(join(dir, 'an-empty-dir'));

    const first = await syncAs(deps, { runId, dir, nodeId: 'node-a' });
    t.match(first, {
      version: 1,
      updatedByNode: 'node-a',
      changed: 7,
      uploaded: 6,
      hashed: 7,
      unchanged: 0,
      deleted: 0,
      skipped: 0,
      dirMatchesVersion: true,
    });
    t.equal(first.bytesUploaded, 5 + 3000 + 5 + 0 + 7 + 6, 'the copy is not uploaded twice');
    const m = await manifestView(db, runId);
    t.same(m, {
      version: 1,
      by: 'node-a',
      files: {
        'a.txt': [sha256('alpha'), 5, 0o644],
        'copy-of-a.txt': [sha256('alpha'), 5, 0o644],
        empty: [sha256(''), 0, 0o644],
        [SPACED]: [sha256('spaces'), 6, 0o644],
        [UNICODE]: [sha256('unicode'), 7, 0o644],
        'sub/deeper/c.txt': [sha256('gamma'), 5, 0o600],
        'sub/tool.bin': [sha256(binary), 3000, 0o755],
      },
    });
    const hashes = [...new Set(Object.values(m.files).map(([h]) => h))].sort();
    t.same(
      await listKeys(objects, `runs/${runId}/`),
      hashes.map((h) => `runs/${runId}/blobs/${h}`),
    );
    t.same(await getBytes(objects, `runs/${runId}/blobs/${sha256(binary)}`), binary);

    const again = await syncAs(deps, { runId, dir, nodeId: 'node-a' });
    t.match(again, { version: 1, changed: 0, uploaded: 0, hashed: 0, unchanged: 7, deleted: 0 });
    t.equal(deps.hasher.seen.length, 7, 'the second sync read no file');
  });

  t.test('a change among many files is the only one read and uploaded', async (t) => {
    const { objects, runId, dir, deps } = await setup(t);
    const files: Record<string, string> = {};
    for (let i = 0; i < 40; i++) files[`f-${i}.txt`] = `content of file ${i}`;
    await writeTree(dir, files);
    await syncAs(deps, { runId, dir, nodeId: 'node-a' });
    const before = await manifestView(db, runId);
    deps.hasher.seen.length = 0;

    await writeFile(join(dir, 'f-17.txt'), 'a longer, different content');
    const edited = await syncAs(deps, { runId, dir, nodeId: 'node-a' });
    t.match(edited, { version: 2, changed: 1, uploaded: 1, hashed: 1, unchanged: 39 });
    t.same(deps.hasher.seen, ['f-17.txt']);
    t.equal((await listKeys(objects, `runs/${runId}/blobs/`)).length, 41);

    // Same size, and the mtime put back: the quick check trusts the stat and never
    // reads the file, so the manifest keeps the old hash.
    deps.hasher.seen.length = 0;
    const f3 = join(dir, 'f-3.txt');
    const st = await lstat(f3);
    await writeFile(f3, 'CONTENT OF FILE 3');
    await utimes(f3, st.atimeMs / 1000, st.mtimeMs / 1000);
    const quick = await syncAs(deps, { runId, dir, nodeId: 'node-a' });
    t.match(quick, { version: 2, changed: 0, hashed: 0, uploaded: 0, unchanged: 40 });
    t.same(deps.hasher.seen, []);
    t.same((await manifestView(db, runId)).files['f-3.txt'], before.files['f-3.txt']);

    // A new mtime with the same content is read, and recorded without an upload.
    const f5 = join(dir, 'f-5.txt');
    await utimes(f5, new Date(), new Date(Date.now() + 5000));
    const touched = await syncAs(deps, { runId, dir, nodeId: 'node-a' });
    t.match(touched, { version: 3, changed: 1, hashed: 1, uploaded: 0 });
    t.same(deps.hasher.seen, ['f-5.txt']);

    // A new mode alone is recorded without reading the file.
    await chmod(join(dir, 'f-6.txt'), 0o700);
    const moded = await syncAs(deps, { runId, dir, nodeId: 'node-a' });
    t.match(moded, { version: 4, changed: 1, hashed: 0, uploaded: 0 });
    t.same((await manifestView(db, runId)).files['f-6.txt'], [
      sha256('content of file 6'),
      17,
      0o700,
    ]);
  });

  t.test(
    'deleting a file deletes its manifest row; known content is not uploaded again',
    async (t) => {
      const { objects, runId, dir, deps } = await setup(t);
      // Big enough that the sync asks the store before sending it again.
      const big = Buffer.alloc(100 * 1024, 'going away ');
      await writeTree(dir, { keep: 'kept', 'dir/gone': { content: big } });
      await syncAs(deps, { runId, dir, nodeId: 'node-a' });
      await rm(join(dir, 'dir'), { recursive: true });
      const deleted = await syncAs(deps, { runId, dir, nodeId: 'node-a' });
      t.match(deleted, { version: 2, deleted: 1, changed: 0, unchanged: 1 });
      t.same(Object.keys((await manifestView(db, runId)).files), ['keep']);

      // The deleted file's blob stays in the store until the run is deleted; a big file
      // with that content again is found there by head() and not uploaded. A small one
      // is put again without asking: the round trip would cost as much as the upload.
      t.ok(await objects.head(`runs/${runId}/blobs/${sha256(big)}`));
      await writeTree(dir, { back: { content: big }, 'copy-of-keep': 'kept' });
      const back = await syncAs(deps, { runId, dir, nodeId: 'node-a' });
      t.match(back, { version: 3, changed: 2, uploaded: 0, hashed: 2 });
    },
  );

  t.test('an evicted directory hydrates byte for byte with modes and mtimes', async (t) => {
    const { runId, root, dir, deps } = await setup(t);
    const big = randomBytes(200_000);
    await writeTree(dir, {
      'run.sh': { content: '#!/bin/sh\necho hi\n', mode: 0o755 },
      'secret.key': { content: 'k', mode: 0o600 },
      'data/big.bin': { content: big, mode: 0o640 },
      'data/empty': '',
      [UNICODE]: 'unicode',
      [SPACED]: 'spaces',
    });
    await mkdir(join(dir, 'empty-dir'));
    await symlink('run.sh', join(dir, 'link-to-run'));
    const synced = await syncAs(deps, { runId, dir, nodeId: 'node-a' });
    t.equal(synced.skipped, 1, 'the link is skipped');
    const before = await readTree(dir);

    await rm(dir, { recursive: true, force: true });
    const hydrated = await hydrateWorkspace(deps, { runId, dir });
    t.same(hydrated, {
      version: 1,
      updatedByNode: 'node-a',
      downloaded: 6,
      bytesDownloaded: 18 + 1 + 200_000 + 0 + 7 + 6,
    });
    const after = await readTree(dir);
    t.same(filesOf(after), filesOf(before), 'every file, its bytes and its mode');
    for (const [path, entry] of Object.entries(after)) {
      if (entry.kind === 'file') t.equal(entry.mtimeMs, before[path]?.mtimeMs, `mtime of ${path}`);
    }
    t.notOk(after['empty-dir'], 'empty directories are not durable');
    t.notOk(after['link-to-run'], 'links are not durable');
    t.same(await readdir(join(root, '.memql-sync-tmp')), [], 'no download left behind');

    deps.hasher.seen.length = 0;
    const resync = await syncAs(deps, { runId, dir, nodeId: 'node-a' });
    t.match(resync, { version: 1, changed: 0, hashed: 0, uploaded: 0, unchanged: 6 });
  });

  t.test('reconcile brings a directory up to another node and removes stale entries', async (t) => {
    const { runId, root, dir: dirA, deps } = await setup(t);
    await writeTree(dirA, { 'a.txt': 'one', 'b.txt': 'two', 'old/c.txt': 'three' });
    const v1 = await syncAs(deps, { runId, dir: dirA, nodeId: 'node-a' });

    // Node B takes over: hydrates, changes things, syncs.
    const dirB = join(root, 'node-b-copy');
    await hydrateWorkspace(deps, { runId, dir: dirB });
    await writeFile(join(dirB, 'a.txt'), 'one, edited on b');
    await rm(join(dirB, 'old'), { recursive: true });
    await writeTree(dirB, { 'new/deep/d.txt': { content: 'four', mode: 0o755 } });
    const v2 = await syncAs(deps, { runId, dir: dirB, nodeId: 'node-b' });
    t.equal(v2.version, 2);

    // Meanwhile A's directory picked up entries the manifest never had.
    const outside = join(root, 'outside');
    await writeTree(outside, { 'precious.txt': 'do not touch' });
    await writeTree(dirA, { 'scratch.txt': 'stale', 'old/scratch2': 'stale' });
    await symlink(join(outside, 'precious.txt'), join(dirA, 'link-out'));
    await symlink(outside, join(dirA, 'dir-link-out'));

    const baseA = await baseOf(deps, { runId, dir: dirA, nodeId: 'node-a' });
    t.equal(baseA.version, v1.version, "A's copy is at the version it synced");
    const current = await reconcileWorkspace(deps, {
      runId,
      dir: dirA,
      nodeId: 'node-a',
      base: baseA,
    });
    t.match(current, { version: 2, updatedByNode: 'node-b', mode: 'full', downloaded: 2, kept: 1 });
    t.equal(current.removed, 5, 'old/c.txt, both scratch files and both links');
    t.same(filesOf(await readTree(dirA)), filesOf(await readTree(dirB)));
    t.notOk((await readTree(dirA)).old, 'a directory emptied by reconcile goes too');
    t.same(await readFile(join(outside, 'precious.txt'), 'utf8'), 'do not touch');
    t.same(Object.keys(await readTree(outside)), ['precious.txt']);

    // Now A knows the head: the next reconcile is one query and touches nothing.
    await writeTree(dirA, { 'left-alone.txt': 'a cheap check does not scan' });
    const cheap = await reconcileWorkspace(deps, {
      runId,
      dir: dirA,
      nodeId: 'node-a',
      base: current.base,
    });
    t.match(cheap, { version: 2, mode: 'current', downloaded: 0, removed: 0 });
    t.equal(cheap.base, current.base, 'the same snapshot, not read again');
    t.ok((await readTree(dirA))['left-alone.txt']);

    // A base at the head's version but committed by another node is not trusted.
    const notMine = await reconcileWorkspace(deps, {
      runId,
      dir: dirA,
      nodeId: 'node-a',
      base: { ...current.base, updatedByNode: 'node-a' },
    });
    t.match(notMine, { mode: 'full', removed: 1 });
  });

  t.test('links, fifos and the files behind them are not synced', async (t) => {
    const { objects, runId, root, dir, deps } = await setup(t);
    const outside = join(root, 'outside');
    await writeTree(outside, { 'secret.txt': 'host secret', 'sub/inner.txt': 'inner' });
    await writeTree(dir, { 'real.txt': 'real', 'sub/x.txt': 'x' });
    await symlink(join(outside, 'secret.txt'), join(dir, 'abs-link'));
    await symlink('../../outside/secret.txt', join(dir, 'sub/rel-link-out'));
    await symlink(outside, join(dir, 'dir-link'));
    await symlink('real.txt', join(dir, 'link-in'));
    execFileSync('mkfifo', [join(dir, 'a-fifo')]);

    const r = await syncAs(deps, { runId, dir, nodeId: 'node-a' });
    t.match(r, { changed: 2, skipped: 5, uploaded: 2 });
    t.same(deps.hasher.seen.sort(), ['real.txt', 'sub/x.txt']);
    t.same(Object.keys((await manifestView(db, runId)).files), ['real.txt', 'sub/x.txt']);
    t.same(
      await listKeys(objects, `runs/${runId}/`),
      [sha256('real'), sha256('x')].sort().map((h) => `runs/${runId}/blobs/${h}`),
    );

    await rm(dir, { recursive: true });
    await hydrateWorkspace(deps, { runId, dir });
    t.same(Object.keys(await readTree(dir)), ['real.txt', 'sub', 'sub/x.txt']);
  });
}
