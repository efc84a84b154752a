import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Test } from 'tap';
import type { ObjectStore } from '../../../src/objects/index.js';
import {
  type BlobRef,
  type Db,
  forkRun,
  getManifest,
  listVersions,
  pruneVersions,
  recordBlobUploads,
  setLabel,
  unneededBlobs,
} from '../../../src/store/index.js';
import { deleteRunData } from '../../../src/workbench/lifecycle/index.js';
import { blobKey, collectBlobs, hydrateWorkspace } from '../../../src/workbench/sync/index.js';
import {
  freshRoot,
  listKeys,
  newRun,
  readTree,
  sha256,
  silentLog,
  syncAs,
  syncDeps,
  writeTree,
} from './fixtures.js';

/**
 * The blob collector on a real Postgres and the object store `makeStore` gives (the
 * filesystem store and S3, by the test files beside this): what retention
 * removes takes exactly the blobs nothing else names, syncs racing it lose nothing, a
 * recorded upload is left alone, a sync recording an upload waits for a collection
 * under way, and a deleted origin keeps the blobs its fork names until the fork goes.
 */

export async function blobCollectorSuite(
  t: Test,
  db: Db,
  makeStore: (t: Test) => Promise<ObjectStore>,
): Promise<void> {
  const objects = await makeStore(t);
  const deps = syncDeps(db, objects);
  const collector = { db, objects, log: silentLog };
  /** Keep only the current version and labelled ones. */
  const KEEP_CURRENT = { keepCount: 1, keepMs: 0 };

  /** Every blob some entry of any run names. */
  async function namedBlobs(): Promise<string[]> {
    const rows = await db.query<{ r: string; h: string }>(
      `select distinct coalesce(blob_run_id, run_id) as r, hash as h from (
       select run_id, blob_run_id, hash from workspace_file
       union all select run_id, blob_run_id, hash from workspace_file_history
       union all select run_id, blob_run_id, hash from workspace_file_conflict) f`,
    );
    return rows.map((r) => blobKey(r.r, r.h)).sort();
  }

  t.test('retention takes exactly the blobs only removed versions named', async (t) => {
    const runId = await newRun(db);
    const root = await freshRoot(t);
    const dir = join(root, runId);
    const target = { runId, dir, nodeId: 'node-c' };
    await writeTree(dir, { 'a.txt': 'a1', 'b.txt': 'b1', 'same.txt': 'kept' });
    await syncAs(deps, target); // 1
    await writeTree(dir, { 'a.txt': 'a2' });
    await syncAs(deps, target); // 2
    await setLabel(db, runId, 2, 'keep-me');
    await writeTree(dir, { 'a.txt': 'a3', 'b.txt': 'b3' });
    await syncAs(deps, target); // 3
    await writeTree(dir, { 'a.txt': 'kept' }); // content another file still has
    await syncAs(deps, target); // 4
    const before = (await listKeys(objects, `runs/${runId}/`)).sort();
    t.equal(before.length, 6, 'a1 b1 kept a2 a3 b3: "kept" once for two files');

    const pruned = await pruneVersions(db, runId, KEEP_CURRENT);
    t.equal(pruned.versions, 2, 'versions 1 and 3 go; 2 is labelled, 4 is current');
    const collected = await collectBlobs(collector, pruned.blobs);
    const after = (await listKeys(objects, `runs/${runId}/`)).sort();
    const gone = before.filter((k) => !after.includes(k));
    t.same(
      gone.sort(),
      [blobKey(runId, sha256('a1')), blobKey(runId, sha256('a3'))].sort(),
      'a1 (only in 1) and a3 (only in 3); b1 is in 2, b3 and kept are current',
    );
    t.equal(collected.deleted, 2);
    t.same(
      after,
      (await namedBlobs()).filter((k) => k.startsWith(`runs/${runId}/`)),
    );
    const listed = await listVersions(db, runId, { limit: 10 });
    t.same(
      listed.versions.map((v) => v.version),
      [4, 2],
    );
    const fresh = join(await freshRoot(t), runId);
    await hydrateWorkspace(deps, { runId, dir: fresh });
    t.same(
      Object.keys(await readTree(fresh)).sort(),
      ['a.txt', 'b.txt', 'same.txt'],
      'the current version hydrates whole',
    );
  });

  t.test('a recorded upload is kept; an expired record is not', async (t) => {
    const runId = await newRun(db);
    const hash = sha256('in flight');
    await objects.put(blobKey(runId, hash), Buffer.from('in flight'), { contentLength: 9 });
    await recordBlobUploads(db, runId, [hash]);
    const kept = await collectBlobs(collector, [{ runId, hash }]);
    t.same(kept, { deleted: 0, kept: 1 }, 'an upload on its way to a commit');
    await db.execute(
      `update blob_upload set started_at = now() - interval '2 days' where blob_run_id = $1`,
      [runId],
    );
    t.same(await collectBlobs(collector, [{ runId, hash }]), { deleted: 1, kept: 0 });
    t.same(await listKeys(objects, `runs/${runId}/`), []);
  });

  t.test('recording an upload waits for a collection under way', async (t) => {
    const runId = await newRun(db);
    const hash = sha256('contended');
    const blob: BlobRef = { runId, hash };
    await objects.put(blobKey(runId, hash), Buffer.from('contended'), { contentLength: 9 });
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let found!: (n: number) => void;
    const checked = new Promise<number>((resolve) => {
      found = resolve;
    });
    // A collection that has checked the blob (unneeded) and not yet deleted it.
    const collecting = db.transaction(async (tx) => {
      const unneeded = await unneededBlobs(tx, [blob]);
      found(unneeded.length);
      await held;
      await objects.deleteMany(unneeded.map((b) => blobKey(b.runId, b.hash)));
    });
    t.equal(await checked, 1, 'the collector found it unneeded');
    let recorded = false;
    const recording = recordBlobUploads(db, runId, [hash]).then(() => {
      recorded = true;
    });
    // The record cannot be written while the collector holds the run's blob lock: the
    // waiting sync is visible in pg_locks as an advisory lock not granted.
    await waitFor(async () => {
      const rows = await db.query<{ n: number }>(
        `select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`,
      );
      return (rows[0]?.n ?? 0) > 0;
    });
    t.notOk(recorded, 'the record waits');
    release();
    await collecting;
    await recording;
    t.ok(recorded, 'and is written once the delete is done');
    t.same(await listKeys(objects, `runs/${runId}/`), [], 'deleted: the sync puts it again after');
    t.same(await collectBlobs(collector, [blob]), { deleted: 0, kept: 1 }, 'then it is kept');
  });

  t.test('syncs racing the collector lose nothing, and it leaves nothing unneeded', async (t) => {
    const runs = [await newRun(db), await newRun(db), await newRun(db)];
    const root = await freshRoot(t);
    const targets = runs.map((runId) => ({ runId, dir: join(root, runId), nodeId: 'node-r' }));
    // Each run cycles through contents, so the contents of removed versions come back.
    const contents = ['red', 'green', 'blue', 'cyan'];
    for (const target of targets) {
      await writeTree(target.dir, { 'x.txt': contents[0]!, 'y.txt': 'still' });
      await syncAs(deps, target);
    }
    const rounds = 12;
    const syncs = (async () => {
      for (let i = 1; i <= rounds; i++) {
        await Promise.all(
          targets.map(async (target, n) => {
            const content = contents[(i + n) % contents.length]!;
            await writeFile(join(target.dir, 'x.txt'), content);
            await writeFile(join(target.dir, `z${i % 3}.txt`), `${content}-${i}`);
            await syncAs(deps, target);
          }),
        );
      }
    })();
    let passes = 0;
    let deleted = 0;
    let done = false;
    void syncs.finally(() => {
      done = true;
    });
    while (!done || passes === 0) {
      for (const runId of runs) {
        const pruned = await pruneVersions(db, runId, KEEP_CURRENT);
        deleted += (await collectBlobs(collector, pruned.blobs)).deleted;
      }
      passes += 1;
    }
    await syncs;
    // Once more, with nothing racing: what remains is exactly what is named.
    for (const runId of runs) {
      const pruned = await pruneVersions(db, runId, KEEP_CURRENT);
      deleted += (await collectBlobs(collector, pruned.blobs)).deleted;
    }
    t.ok(deleted > 0, `the collector deleted blobs while syncs ran (${passes} passes, ${deleted})`);
    for (const target of targets) {
      const fresh = join(await freshRoot(t), target.runId);
      await hydrateWorkspace(deps, { runId: target.runId, dir: fresh });
      t.same(await readTree(fresh), await readTree(target.dir), `${target.runId} whole`);
    }
    const stored = (await listKeys(objects, '')).filter((k) => runs.some((r) => k.includes(r)));
    const named = (await namedBlobs()).filter((k) => runs.some((r) => k.includes(r)));
    t.same(
      stored.sort(),
      named,
      'every stored blob of theirs is named, and every named one stored',
    );
  });

  t.test('a deleted origin keeps what its fork names until the fork goes', async (t) => {
    const origin = await newRun(db);
    const root = await freshRoot(t);
    const target = { runId: origin, dir: join(root, origin), nodeId: 'node-f' };
    await writeTree(target.dir, { 'shared.txt': 'shared', 'mine.txt': 'origin only' });
    await syncAs(deps, target);
    const fork = `${origin}-fork`;
    t.match(
      await forkRun(db, {
        fromRunId: origin,
        ownerUserId: 'owner-1',
        version: 1,
        fork: { id: fork, ownerUserId: 'owner-1' },
      }),
      { kind: 'forked', files: 2 },
    );
    // The fork replaces one file: its new content is its own blob.
    const forkTarget = { runId: fork, dir: join(root, fork), nodeId: 'node-f' };
    await hydrateWorkspace(deps, { runId: fork, dir: forkTarget.dir });
    await writeTree(forkTarget.dir, { 'mine.txt': 'fork only' });
    await syncAs(deps, forkTarget);

    await deleteRunData({ db, objects, log: silentLog }, origin);
    t.same(
      await listKeys(objects, `runs/${origin}/`),
      [blobKey(origin, sha256('origin only')), blobKey(origin, sha256('shared'))].sort(),
      "the origin's blobs its fork names (current and history) stay",
    );
    const fresh = join(await freshRoot(t), fork);
    await hydrateWorkspace(deps, { runId: fork, dir: fresh });
    t.same(Object.keys(await readTree(fresh)).sort(), ['mine.txt', 'shared.txt']);
    t.equal((await getManifest(db, fork)).files.length, 2);

    await pruneVersions(db, fork, KEEP_CURRENT).then((p) => collectBlobs(collector, p.blobs));
    t.same(
      await listKeys(objects, `runs/${origin}/`),
      [blobKey(origin, sha256('shared'))],
      'once only a removed version named it, it goes',
    );
    await deleteRunData({ db, objects, log: silentLog }, fork);
    t.same(await listKeys(objects, `runs/${origin}/`), [], 'and with the fork, the rest');
    t.same(await listKeys(objects, `runs/${fork}/`), []);
  });
}

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setImmediate(resolve));
}
