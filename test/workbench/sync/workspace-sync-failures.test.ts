import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import t, { type Test } from 'tap';
import {
  FsObjectStore,
  type ObjectStore,
  ObjectStoreUnavailableError,
  type PutObjectOptions,
} from '../../../src/objects/index.js';
import { commitManifestChange, type Db, openDb, type Queryable } from '../../../src/store/index.js';
import { sha256WorkspaceFile } from '../../../src/workbench/sync/blobs.js';
import {
  hydrateWorkspace,
  reconcileWorkspace,
  syncWorkspace,
} from '../../../src/workbench/sync/index.js';
import {
  baseOf,
  filesOf,
  freshRoot,
  holdWorkspace,
  listKeys,
  manifestView,
  newRun,
  openTestDb,
  readTree,
  sha256,
  syncAs,
  syncDeps,
  type TreeFile,
  writeTree,
} from './fixtures.js';

/** The sync target of node-a's copy, as the host would pass it. */
async function asNodeA(deps: Parameters<typeof baseOf>[0], runId: string, dir: string) {
  const target = { runId, dir, nodeId: 'node-a' };
  return {
    ...target,
    generation: await holdWorkspace(deps.db, runId, 'node-a'),
    base: await baseOf(deps, target),
  };
}

const { db, url } = await openTestDb(t);

/** The filesystem store, except that `put` fails once `putsLeft` reaches 0. */
class FailingStore extends FsObjectStore implements ObjectStore {
  putsLeft = Number.POSITIVE_INFINITY;
  puts = 0;
  override async put(key: string, body: Uint8Array | Readable, opts?: PutObjectOptions) {
    if (this.putsLeft <= 0) {
      (body as Partial<Readable>).destroy?.();
      throw new ObjectStoreUnavailableError('disk on fire (injected)');
    }
    this.putsLeft -= 1;
    this.puts += 1;
    return super.put(key, body, opts);
  }
}

async function setup(t: Test) {
  const objects = new FailingStore({ baseDir: await freshRoot(t) });
  const runId = await newRun(db);
  const root = await freshRoot(t);
  const dir = join(root, runId);
  await writeTree(dir, { 'a.txt': 'a', 'b.txt': 'b', 'c.txt': 'c' });
  const deps = syncDeps(db, objects);
  await syncAs(deps, { runId, dir, nodeId: 'node-a' });
  return { objects, runId, root, dir, deps };
}

const unavailable = (runId: string, reason: string) => ({
  code: 'unavailable',
  payload: { runId, reason },
});

t.test('an object store failure mid-upload commits nothing; the retry finishes', async (t) => {
  const { objects, runId, dir, deps } = await setup(t);
  const before = await manifestView(db, runId);
  // Big files (over SMALL_BLOB_BYTES): the retry asks the store before sending each.
  const big = (text: string) => ({ content: Buffer.alloc(70 * 1024, text) });
  const files: Record<string, TreeFile> = { 'a.txt': big('a changed') };
  for (let i = 0; i < 9; i++) files[`new-${i}.txt`] = big(`new ${i}`);
  await writeTree(dir, files);

  objects.putsLeft = 3;
  objects.puts = 0;
  const failed = syncWorkspace({ ...deps, concurrency: 1 }, await asNodeA(deps, runId, dir));
  await t.rejects(failed, unavailable(runId, 'object_store'));
  await t.rejects(failed, /object store failed.*durable copy is unchanged/);
  t.equal(objects.puts, 3, 'three blobs went up before the failure');
  t.same(await manifestView(db, runId), before, 'same version, same rows');

  objects.putsLeft = Number.POSITIVE_INFINITY;
  const retried = await syncAs(deps, { runId, dir, nodeId: 'node-a' });
  t.match(
    retried,
    { version: 2, changed: 10, uploaded: 7 },
    'blobs already up are found by head()',
  );
  t.equal((await listKeys(objects, `runs/${runId}/blobs/`)).length, 13);
});

t.test('a database failure before the commit leaves the manifest as it was', async (t) => {
  const { objects, runId, dir, deps } = await setup(t);
  const before = await manifestView(db, runId);
  const doomed = await openDb({ kind: 'postgres', url });
  t.teardown(() => doomed.close());
  const changed = Buffer.alloc(70 * 1024, 'a, changed before the database went away');
  await writeTree(dir, { 'a.txt': { content: changed } });

  const doomedDeps = syncDeps(doomed, objects);
  doomedDeps.hasher.beforeNext = () => doomed.close();
  await t.rejects(
    syncWorkspace(doomedDeps, await asNodeA(deps, runId, dir)),
    unavailable(runId, 'database'),
  );
  t.same(await manifestView(db, runId), before);
  t.equal(
    await objects.head(`runs/${runId}/blobs/${sha256(changed)}`),
    null,
    'nothing was put: an upload is recorded (for the collector) before it goes',
  );
  t.match(await syncAs(deps, { runId, dir, nodeId: 'node-a' }), { version: 2, uploaded: 1 });
});

t.test('a copy taken over while it synced merges its own changes onto the head', async (t) => {
  const { runId, root, dir, deps } = await setup(t);
  const dirB = join(root, 'b');
  await hydrateWorkspace(deps, { runId, dir: dirB });
  await writeTree(dir, { 'a.txt': 'a from node a', 'only-a.txt': 'mine' });
  await writeTree(dirB, { 'b.txt': 'b from node b', 'only-b.txt': 'theirs' });

  // Node B commits after A has read the manifest and while A hashes.
  deps.hasher.beforeNext = async () => {
    const b = await syncAs(syncDeps(db, deps.objects), {
      runId,
      dir: dirB,
      nodeId: 'node-b',
    });
    t.equal(b.version, 2);
  };
  const merged = await syncAs(deps, { runId, dir, nodeId: 'node-a' });
  t.match(merged, { version: 3, updatedByNode: 'node-a', dirMatchesVersion: false });
  t.same((await manifestView(db, runId)).files, {
    'a.txt': [sha256('a from node a'), 13, 0o644],
    'b.txt': [sha256('b from node b'), 13, 0o644],
    'c.txt': [sha256('c'), 1, 0o644],
    'only-a.txt': [sha256('mine'), 4, 0o644],
    'only-b.txt': [sha256('theirs'), 6, 0o644],
  });

  // The directory lacks B's files, so the caller reconciles in full.
  const r = await reconcileWorkspace(deps, { runId, dir, nodeId: 'node-a', base: undefined });
  t.match(r, { mode: 'full', version: 3, downloaded: 2 });
  t.same(Object.keys(filesOf(await readTree(dir))), [
    'a.txt',
    'b.txt',
    'c.txt',
    'only-a.txt',
    'only-b.txt',
  ]);
});

/** The test database, except that another node commits just before each commit after the first read. */
function racingDb(inner: Db, runId: string): Db {
  let transactions = 0;
  return {
    kind: inner.kind,
    query: (text, params) => inner.query(text, params),
    execute: (text, params) => inner.execute(text, params),
    script: (text) => inner.script(text),
    close: () => inner.close(),
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      transactions += 1;
      if (transactions > 1) {
        await commitManifestChange(inner, {
          runId,
          nodeId: 'node-z',
          upserts: [
            { path: `z-${transactions}`, hash: sha256('z'), size: 1, mode: 0o644, mtimeMs: 1 },
          ],
          deletes: [],
        });
      }
      return inner.transaction(fn);
    },
  };
}

t.test('commits racing in from another writer are kept beside this one', async (t) => {
  const { objects, runId, dir } = await setup(t);
  await writeTree(dir, { 'a.txt': 'a, written while others commit' });
  const deps = syncDeps(racingDb(db, runId), objects);
  const r = await syncAs(deps, { runId, dir, nodeId: 'node-a' });
  t.match(r, { dirMatchesVersion: false, conflicts: 0, holder: true });
  const after = await manifestView(db, runId);
  t.equal(after.by, 'node-a', 'this commit came last');
  t.same(after.files['a.txt'], [sha256('a, written while others commit'), 30, 0o644]);
  const others = Object.keys(after.files).filter((p) => p.startsWith('z-'));
  t.ok(others.length >= 1, `the other writer's files are all still there (${others})`);
  // Before the upload's record and before the commit: two commits while this sync ran.
  t.same(others, ['z-2', 'z-3'], 'the other writer committed while this sync ran');
  t.equal(after.version, 4, 'one version per commit, none lost');
});

t.test('a file that changes between hashing and upload is synced again', async (t) => {
  const { objects, runId, dir, deps } = await setup(t);
  const target = join(dir, 'a.txt');
  await writeFile(target, 'version 1');
  let changes = 0;
  const racingHasher: typeof sha256WorkspaceFile = async (file) => {
    const hash = await sha256WorkspaceFile(file);
    if (file.rel === 'a.txt' && changes === 0) {
      changes += 1;
      await writeFile(target, 'version 2'); // same size, other bytes
    }
    return hash;
  };
  const r = await syncAs({ ...deps, hashFile: racingHasher }, { runId, dir, nodeId: 'node-a' });
  t.match(r, { version: 2, changed: 1, uploaded: 1 });
  t.same((await manifestView(db, runId)).files['a.txt'], [sha256('version 2'), 9, 0o644]);
  t.equal(await objects.head(`runs/${runId}/blobs/${sha256('version 1')}`), null, 'no stale blob');

  // A file that changes on every attempt is given up on, with nothing committed.
  const before = await manifestView(db, runId);
  let n = 0;
  const alwaysChanging: typeof sha256WorkspaceFile = async (file) => {
    const hash = await sha256WorkspaceFile(file);
    if (file.rel === 'a.txt') await writeFile(target, `version ${n++ % 10}x`);
    return hash;
  };
  await writeFile(target, 'version 3x');
  await t.rejects(
    syncWorkspace({ ...deps, hashFile: alwaysChanging }, await asNodeA(deps, runId, dir)),
    unavailable(runId, 'files_changing'),
  );
  t.same(await manifestView(db, runId), before);
});
