/**
 * Which blobs the store still needs, for the collector that deletes the rest. A blob is
 * `runs/<run>/blobs/<hash>`, named by `(run, hash)`; it is needed while any entry names
 * it: a current entry, a history entry (a kept version's), or a conflict's lost side,
 * of its own run (`blob_run_id` null) or of a fork (`blob_run_id` = its run). A blob a
 * sync is about to put is needed too, from the moment it is recorded in `blob_upload`
 * until its commit (or {@link BLOB_UPLOAD_TTL_MS} without one).
 *
 * The race the collector must not lose is a sync putting a blob the collector has
 * found unreferenced. Both take the lock of the blobs' run (an advisory transaction
 * lock on its id) for their step: a sync shared, to record the blobs before it puts
 * them, the collector exclusive, to check and delete them. So either the record comes
 * first (the collector keeps the blob) or the delete does (the sync's put comes after
 * it and makes the blob again). One lock per run, never one per blob: a sync of a
 * hundred thousand files takes one, not a hundred thousand (the lock table is small),
 * and syncs of a run do not wait for each other, only for a collection under way.
 *
 * @module
 */

import type { Db, Queryable } from './db.js';

/** How long an upload's record keeps its blob without a commit, ms: the longest upload. */
export const BLOB_UPLOAD_TTL_MS = 24 * 60 * 60 * 1000;

/** One blob: the run whose prefix holds it, and its content hash. */
export interface BlobRef {
  runId: string;
  hash: string;
}

/** Namespaces the runs' lock keys, so they meet no other advisory lock. */
const LOCK_PREFIX = 'memql-blobs/';

/**
 * Takes the blob locks of `runIds` for the rest of transaction `tx`, in sorted order (two
 * collectors never wait on each other): exclusive for the collector, shared for a sync.
 */
async function lockRuns(
  tx: Queryable,
  runIds: readonly string[],
  how: 'exclusive' | 'shared',
): Promise<void> {
  const fn = how === 'exclusive' ? 'pg_advisory_xact_lock' : 'pg_advisory_xact_lock_shared';
  await tx.query(
    `select ${fn}(hashtextextended($1 || r, 0)) from unnest($2::text[]) as r order by r`,
    [LOCK_PREFIX, [...new Set(runIds)].sort()],
  );
}

/**
 * Records that a sync of `runId` is about to put these blobs (of its own prefix), under
 * the run's shared blob lock: from here until its commit clears the record, no
 * collector deletes them.
 */
export async function recordBlobUploads(
  db: Db,
  runId: string,
  hashes: readonly string[],
): Promise<void> {
  if (hashes.length === 0) return;
  await db.transaction(async (tx) => {
    await lockRuns(tx, [runId], 'shared');
    await tx.execute(
      `insert into blob_upload (blob_run_id, hash)
       select $1, h from unnest($2::text[]) as h
       on conflict (blob_run_id, hash) do update set started_at = now()`,
      [runId, [...new Set(hashes)]],
    );
  });
}

/** Clears upload records a commit made needless (the entries now name the blobs). */
export async function clearBlobUploads(
  q: Queryable,
  runId: string,
  hashes: readonly string[],
): Promise<void> {
  if (hashes.length === 0) return;
  await q.execute('delete from blob_upload where blob_run_id = $1 and hash = any($2::text[])', [
    runId,
    [...hashes],
  ]);
}

/**
 * In transaction `tx`, takes the blob locks of the candidates' runs and answers the
 * candidates nothing needs: no entry names them and no fresh upload record holds them.
 * Delete those before `tx` ends, so no sync can record one of them in between.
 */
export async function unneededBlobs(
  tx: Queryable,
  candidates: readonly BlobRef[],
): Promise<BlobRef[]> {
  if (candidates.length === 0) return [];
  await lockRuns(
    tx,
    candidates.map((c) => c.runId),
    'exclusive',
  );
  const byRun = new Map<string, Set<string>>();
  for (const c of candidates) {
    const hashes = byRun.get(c.runId) ?? new Set<string>();
    hashes.add(c.hash);
    byRun.set(c.runId, hashes);
  }
  const unneeded: BlobRef[] = [];
  for (const [runId, hashes] of byRun) {
    // The run's own entries through its primary key, its forks' through their index.
    const named = await tx.query(
      `select hash from workspace_file
       where run_id = $1 and blob_run_id is null and hash = any($2::text[])
       union select hash from workspace_file where blob_run_id = $1 and hash = any($2::text[])
       union select hash from workspace_file_history
       where run_id = $1 and blob_run_id is null and hash = any($2::text[])
       union select hash from workspace_file_history
       where blob_run_id = $1 and hash = any($2::text[])
       union select hash from workspace_file_conflict
       where run_id = $1 and blob_run_id is null and hash = any($2::text[])
       union select hash from workspace_file_conflict
       where blob_run_id = $1 and hash = any($2::text[])
       union select hash from blob_upload
       where blob_run_id = $1 and hash = any($2::text[])
         and started_at > now() - make_interval(secs => $3::float8 / 1000)`,
      [runId, [...hashes], BLOB_UPLOAD_TTL_MS],
    );
    const kept = new Set(named.map((r) => String(r.hash)));
    for (const hash of hashes) if (!kept.has(hash)) unneeded.push({ runId, hash });
  }
  return unneeded;
}

/** Removes upload records older than the TTL (their syncs never committed). */
export async function expireBlobUploads(q: Queryable): Promise<number> {
  return q.execute(
    `delete from blob_upload
     where started_at < now() - make_interval(secs => $1::float8 / 1000)`,
    [BLOB_UPLOAD_TTL_MS],
  );
}

/** The blobs of other runs that `runId`'s entries name (a fork's), for after its deletion. */
export async function foreignBlobsOf(q: Queryable, runId: string): Promise<BlobRef[]> {
  const rows = await q.query(
    `select distinct blob_run_id as r, hash as h from (
       select blob_run_id, hash from workspace_file where run_id = $1 and blob_run_id is not null
       union all
       select blob_run_id, hash from workspace_file_history
       where run_id = $1 and blob_run_id is not null
       union all
       select blob_run_id, hash from workspace_file_conflict
       where run_id = $1 and blob_run_id is not null
     ) f`,
    [runId],
  );
  return rows.map((r) => ({ runId: String(r.r), hash: String(r.h) }));
}

/** Whether any other run's entries name a blob of `runId` (it has forks that do). */
export async function blobsNamedElsewhere(q: Queryable, runId: string): Promise<boolean> {
  const rows = await q.query(
    `select exists (select 1 from workspace_file where blob_run_id = $1)
         or exists (select 1 from workspace_file_history where blob_run_id = $1)
         or exists (select 1 from workspace_file_conflict where blob_run_id = $1) as named`,
    [runId],
  );
  return rows[0]?.named === true;
}
