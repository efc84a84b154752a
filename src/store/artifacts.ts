import type { Queryable } from './db.js';
import { date, dateOrNull } from './rows.js';

/** A promoted artifact: a copy of a workspace file that its owner may download. */
export interface Artifact {
  id: string;
  runId: string;
  ownerUserId: string;
  name: string;
  contentType: string;
  size: number;
  hash: string;
  /** Where the bytes live in the object store (outside any workspace prefix). */
  objectKey: string;
  /** The workspace path it was promoted from. */
  sourcePath: string;
  createdAt: Date;
  deletedAt: Date | null;
}

const COLUMNS = `id, run_id, owner_user_id, name, content_type, size, hash, object_key,
  source_path, created_at, deleted_at`;

function toArtifact(r: Record<string, unknown>): Artifact {
  return {
    id: String(r.id),
    runId: String(r.run_id),
    ownerUserId: String(r.owner_user_id),
    name: String(r.name),
    contentType: String(r.content_type),
    size: Number(r.size),
    hash: String(r.hash),
    objectKey: String(r.object_key),
    sourcePath: String(r.source_path),
    createdAt: date(r.created_at),
    deletedAt: dateOrNull(r.deleted_at),
  };
}

/** Records an artifact whose bytes are already stored. */
export async function insertArtifact(
  q: Queryable,
  a: Omit<Artifact, 'createdAt' | 'deletedAt'>,
): Promise<Artifact> {
  const rows = await q.query(
    `insert into artifact (id, run_id, owner_user_id, name, content_type, size, hash,
       object_key, source_path)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning ${COLUMNS}`,
    [
      a.id,
      a.runId,
      a.ownerUserId,
      a.name,
      a.contentType,
      a.size,
      a.hash,
      a.objectKey,
      a.sourcePath,
    ],
  );
  return toArtifact(rows[0]!);
}

/** One artifact, only when `ownerUserId` owns it and it is not deleted. */
export async function getArtifactForOwner(
  q: Queryable,
  id: string,
  ownerUserId: string,
): Promise<Artifact | null> {
  const rows = await q.query(
    `select ${COLUMNS} from artifact
     where id = $1 and owner_user_id = $2 and deleted_at is null`,
    [id, ownerUserId],
  );
  return rows[0] ? toArtifact(rows[0]) : null;
}

/** A user's artifacts, newest first, optionally for one run. */
export async function listArtifactsForOwner(
  q: Queryable,
  ownerUserId: string,
  opts: { runId?: string; limit?: number } = {},
): Promise<Artifact[]> {
  const rows = await q.query(
    `select ${COLUMNS} from artifact
     where owner_user_id = $1 and deleted_at is null and ($2::text is null or run_id = $2)
     order by created_at desc, id limit $3`,
    [ownerUserId, opts.runId ?? null, opts.limit ?? 200],
  );
  return rows.map(toArtifact);
}

/** Marks a run's artifacts deleted, returning them so their bytes can be removed. */
export async function markRunArtifactsDeleted(q: Queryable, runId: string): Promise<Artifact[]> {
  const rows = await q.query(
    `update artifact set deleted_at = now() where run_id = $1 and deleted_at is null
     returning ${COLUMNS}`,
    [runId],
  );
  return rows.map(toArtifact);
}
