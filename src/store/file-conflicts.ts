import type { Queryable } from './db.js';
import { date } from './rows.js';

/**
 * The side of a path that lost when two writers changed it from the same base. The
 * manifest holds the winner; this row keeps the loser (its content stays in the
 * object store until the run is deleted), so nothing acknowledged vanishes unseen.
 */
export interface FileConflict {
  runId: string;
  path: string;
  /** Content of the losing side; null when that side deleted the file. */
  hash: string | null;
  size: number | null;
  mode: number | null;
  mtimeMs: number | null;
  /** The run whose blob holds the lost side's content, when not `runId` (a fork's entry). */
  blobRunId?: string | null;
  /** The node whose commit met the conflict, and the generation it committed under. */
  committerNodeId: string;
  committerGeneration: number;
  /** `committer`: the committer's change lost; `head`: the head entry it replaced lost. */
  side: 'committer' | 'head';
  /** The version the committer's copy was reconciled from. */
  baseVersion: number;
  /** The version the merge committed. */
  committedVersion: number;
}

/** A recorded conflict, as read back. */
export interface StoredFileConflict extends FileConflict {
  id: number;
  createdAt: Date;
}

/** Records conflicts in the committing transaction. */
export async function insertFileConflicts(
  tx: Queryable,
  conflicts: readonly FileConflict[],
): Promise<void> {
  if (conflicts.length === 0) return;
  await tx.execute(
    `insert into workspace_file_conflict (run_id, path, hash, size, mode, mtime_ms,
       committer_node_id, committer_generation, side, base_version, committed_version,
       blob_run_id)
     select * from unnest($1::text[], $2::text[], $3::text[], $4::int8[], $5::int4[],
       $6::int8[], $7::text[], $8::int8[], $9::text[], $10::int8[], $11::int8[], $12::text[])`,
    [
      conflicts.map((c) => c.runId),
      conflicts.map((c) => c.path),
      conflicts.map((c) => c.hash),
      conflicts.map((c) => c.size),
      conflicts.map((c) => c.mode),
      conflicts.map((c) => (c.mtimeMs === null ? null : Math.trunc(c.mtimeMs))),
      conflicts.map((c) => c.committerNodeId),
      conflicts.map((c) => c.committerGeneration),
      conflicts.map((c) => c.side),
      conflicts.map((c) => c.baseVersion),
      conflicts.map((c) => c.committedVersion),
      conflicts.map((c) => c.blobRunId ?? null),
    ],
  );
}

/** A run's recorded conflicts, oldest first. */
export async function listFileConflicts(
  q: Queryable,
  runId: string,
): Promise<StoredFileConflict[]> {
  const rows = await q.query(
    `select id, run_id, path, hash, size, mode, mtime_ms, committer_node_id,
       committer_generation, side, base_version, committed_version, created_at
     from workspace_file_conflict where run_id = $1 order by id`,
    [runId],
  );
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return rows.map((r) => ({
    id: Number(r.id),
    runId: String(r.run_id),
    path: String(r.path),
    hash: r.hash === null || r.hash === undefined ? null : String(r.hash),
    size: num(r.size),
    mode: num(r.mode),
    mtimeMs: num(r.mtime_ms),
    committerNodeId: String(r.committer_node_id),
    committerGeneration: Number(r.committer_generation),
    side: r.side as 'committer' | 'head',
    baseVersion: Number(r.base_version),
    committedVersion: Number(r.committed_version),
    createdAt: date(r.created_at),
  }));
}
