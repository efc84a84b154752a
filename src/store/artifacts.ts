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

/** An artifact to record: its bytes are already stored under `objectKey`. */
export type NewArtifact = Omit<Artifact, 'createdAt' | 'deletedAt'>;

/** Records an artifact whose bytes are already stored. */
export async function insertArtifact(q: Queryable, a: NewArtifact): Promise<Artifact> {
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

/** {@link NewArtifact}s as the JSON array parameter {@link artifactsInsert} reads. */
export function artifactsParam(artifacts: readonly NewArtifact[]): string {
  return JSON.stringify(
    artifacts.map((a) => ({
      id: a.id,
      run_id: a.runId,
      owner_user_id: a.ownerUserId,
      name: a.name,
      content_type: a.contentType,
      size: a.size,
      hash: a.hash,
      object_key: a.objectKey,
      source_path: a.sourcePath,
    })),
  );
}

/**
 * The CTEs (`new_artifacts`, `artifact_events`) that record artifacts from the JSON
 * array parameter `$rows` ({@link artifactsParam}), each with its `artifact.promoted`
 * audit event, inside a larger statement: one step with whatever else it records.
 * With `guard`, the name of a CTE, nothing is recorded unless that CTE has a row (the
 * command finish the outputs belong to). The event carries ids, size and type only:
 * names and paths are the user's data, not the operator's.
 */
export function artifactsInsert(p: { rows: number; commandId?: number; guard?: string }): string {
  return `new_artifacts as (
       insert into artifact (id, run_id, owner_user_id, name, content_type, size, hash,
         object_key, source_path)
       select e.v->>'id', e.v->>'run_id', e.v->>'owner_user_id', e.v->>'name',
         e.v->>'content_type', (e.v->>'size')::bigint, e.v->>'hash', e.v->>'object_key',
         e.v->>'source_path'
       from jsonb_array_elements($${p.rows}::text::jsonb) with ordinality as e(v, n)
       ${p.guard ? `where exists (select 1 from ${p.guard})` : ''}
       order by e.n
       returning id, run_id, owner_user_id, size, content_type
     ), artifact_events as (
       insert into audit_event (event_type, run_id, command_id, owner_user_id, metadata)
       select 'artifact.promoted', run_id, ${p.commandId ? `$${p.commandId}::text` : 'null'},
         owner_user_id,
         jsonb_build_object('artifactId', id, 'size', size, 'contentType', content_type)
       from new_artifacts
     )`;
}

/**
 * Records artifacts whose bytes are stored, with their `artifact.promoted` events, in
 * one statement. Returns how many were recorded.
 */
export async function recordArtifacts(
  q: Queryable,
  artifacts: readonly NewArtifact[],
): Promise<number> {
  const rows = await q.query(
    `with ${artifactsInsert({ rows: 1 })} select count(*)::int as n from new_artifacts`,
    [artifactsParam(artifacts)],
  );
  return Number(rows[0]?.n ?? 0);
}
