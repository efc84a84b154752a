import type { VersionSource } from '../contract/index.js';
import type { Db, Queryable } from './db.js';
import { StoreError } from './errors.js';
import { textOrNull } from './rows.js';

/** One durable file of a run's workspace. */
export interface ManifestFile {
  /** Relative path inside the workspace, `/`-separated. */
  path: string;
  /** Lowercase hex SHA-256 of the content; the object key is derived from it. */
  hash: string;
  /** Bytes. */
  size: number;
  /** Permission bits (e.g. 0o644). */
  mode: number;
  /** Modification time, milliseconds since the epoch. */
  mtimeMs: number;
  /**
   * The run whose blob holds the content, when not the manifest's own run: a fork's
   * entries name the run they were committed in (see {@link blobOwner}).
   */
  blobRunId?: string;
}

/** The run whose blob prefix holds an entry's content. */
export function blobOwner(runId: string, file: Pick<ManifestFile, 'blobRunId'>): string {
  return file.blobRunId ?? runId;
}

/** A run's manifest at one version. */
export interface Manifest {
  runId: string;
  /** Increases by one with every committed change; 0 before the first. */
  version: number;
  /** The node that committed the latest version, so it can skip a full reconcile. */
  updatedByNode: string | null;
  files: ManifestFile[];
}

/** Rows per insert statement: large trees commit in a few round trips. */
const UPSERT_BATCH = 2000;

/** The columns {@link toFile} reads. */
export const FILE_COLUMNS = 'path, hash, size, mode, mtime_ms, blob_run_id';

/** A manifest entry from its row. */
export function toFile(r: Record<string, unknown>): ManifestFile {
  const blobRunId = textOrNull(r.blob_run_id);
  return {
    path: String(r.path),
    hash: String(r.hash),
    size: Number(r.size),
    mode: Number(r.mode),
    mtimeMs: Number(r.mtime_ms),
    ...(blobRunId === null ? {} : { blobRunId }),
  };
}

/** The run's manifest version and last writer, without the file list. */
export async function getManifestHead(
  q: Queryable,
  runId: string,
): Promise<{ version: number; updatedByNode: string | null }> {
  const rows = await q.query(
    'select version, updated_by_node from workspace_manifest where run_id = $1',
    [runId],
  );
  const row = rows[0];
  return row
    ? { version: Number(row.version), updatedByNode: textOrNull(row.updated_by_node) }
    : { version: 0, updatedByNode: null };
}

/** The whole manifest, read consistently in one transaction. */
export async function getManifest(db: Db, runId: string): Promise<Manifest> {
  return db.transaction(async (tx) => {
    const head = await getManifestHead(tx, runId);
    const rows = await tx.query(
      `select ${FILE_COLUMNS} from workspace_file where run_id = $1 order by path`,
      [runId],
    );
    return { runId, ...head, files: rows.map(toFile) };
  });
}

/** A change to commit: files written or replaced, and paths removed. */
export interface ManifestChange {
  runId: string;
  nodeId: string;
  upserts: ManifestFile[];
  deletes: string[];
  /**
   * The version the change was computed against. When given and the manifest moved
   * on meanwhile, the commit is refused with `conflict` and nothing is written.
   */
  expectedVersion?: number;
  /** What made the version; default an action with no name. */
  origin?: VersionOrigin;
}

/** What made a version: the fields of its `workspace_version` row. */
export interface VersionOrigin {
  source: Exclude<VersionSource, 'unrecorded'>;
  /** The action (`fs_write`, `exec`, ...). */
  action?: string;
  commandId?: string;
  callId?: string;
  /** A restore's version. */
  restoredFrom?: number;
  /** A fork's origin. */
  forkedFrom?: { runId: string; version: number };
}

/**
 * Locks the run's manifest head for the rest of the transaction (creating it at
 * version 0 when the run has none) and returns it: the one place commits serialize.
 */
export async function lockManifest(
  tx: Queryable,
  runId: string,
): Promise<{ version: number; updatedByNode: string | null }> {
  await tx.execute(
    `insert into workspace_manifest (run_id) values ($1) on conflict (run_id) do nothing`,
    [runId],
  );
  const locked = await tx.query(
    'select version, updated_by_node from workspace_manifest where run_id = $1 for update',
    [runId],
  );
  return {
    version: Number(locked[0]!.version),
    updatedByNode: textOrNull(locked[0]!.updated_by_node),
  };
}

/** A manifest entry and the version that last wrote it. */
export interface VersionedFile extends ManifestFile {
  /** The manifest version whose commit wrote this entry. */
  version: number;
}

/** The current entries of `paths` (absent paths are missing from the map). */
export async function getManifestEntries(
  q: Queryable,
  runId: string,
  paths: readonly string[],
): Promise<Map<string, VersionedFile>> {
  const out = new Map<string, VersionedFile>();
  for (let i = 0; i < paths.length; i += UPSERT_BATCH * 5) {
    const rows = await q.query(
      `select ${FILE_COLUMNS}, version from workspace_file
       where run_id = $1 and path = any($2::text[])`,
      [runId, paths.slice(i, i + UPSERT_BATCH * 5)],
    );
    for (const r of rows) out.set(String(r.path), { ...toFile(r), version: Number(r.version) });
  }
  return out;
}

/** What a commit changed, counted from the entries it replaced. */
export interface VersionCounts {
  added: number;
  changed: number;
  removed: number;
}

/**
 * Writes `upserts` and removes `deletes` at `version` (the locked head plus one), moves
 * the head there, keeps the entries it replaced or removed in the history and records
 * the version with its origin. Call inside the transaction that ran
 * {@link lockManifest}.
 */
export async function applyManifestChange(
  tx: Queryable,
  change: {
    runId: string;
    nodeId: string;
    version: number;
    upserts: ManifestFile[];
    deletes: string[];
    generation?: number;
    origin?: VersionOrigin;
  },
): Promise<VersionCounts> {
  // The entries this commit replaces or removes go to the history first, each current
  // from the version that wrote it until this one.
  const touched = [...change.deletes, ...change.upserts.map((f) => f.path)];
  const archived = new Set<string>();
  for (let i = 0; i < touched.length; i += UPSERT_BATCH * 5) {
    const rows = await tx.query(
      `insert into workspace_file_history
         (run_id, path, hash, size, mode, mtime_ms, blob_run_id, from_version, to_version)
       select run_id, path, hash, size, mode, mtime_ms, blob_run_id, version, $3
       from workspace_file where run_id = $1 and path = any($2::text[])
       returning path`,
      [change.runId, touched.slice(i, i + UPSERT_BATCH * 5), change.version],
    );
    for (const r of rows) archived.add(String(r.path));
  }
  if (change.deletes.length > 0) {
    await tx.execute('delete from workspace_file where run_id = $1 and path = any($2::text[])', [
      change.runId,
      change.deletes,
    ]);
  }
  for (let i = 0; i < change.upserts.length; i += UPSERT_BATCH) {
    const batch = change.upserts.slice(i, i + UPSERT_BATCH);
    await tx.execute(
      `insert into workspace_file (run_id, path, hash, size, mode, mtime_ms, blob_run_id, version)
       select $1, f.path, f.hash, f.size, f.mode, f.mtime_ms, f.blob_run_id, $8
       from unnest($2::text[], $3::text[], $4::int8[], $5::int4[], $6::int8[], $7::text[])
         as f(path, hash, size, mode, mtime_ms, blob_run_id)
       on conflict (run_id, path) do update set hash = excluded.hash, size = excluded.size,
         mode = excluded.mode, mtime_ms = excluded.mtime_ms, blob_run_id = excluded.blob_run_id,
         version = excluded.version`,
      [
        change.runId,
        batch.map((f) => f.path),
        batch.map((f) => f.hash),
        batch.map((f) => f.size),
        batch.map((f) => f.mode),
        batch.map((f) => Math.trunc(f.mtimeMs)),
        batch.map((f) => f.blobRunId ?? null),
        change.version,
      ],
    );
  }
  await tx.execute(
    `update workspace_manifest set version = $2, updated_by_node = $3, updated_at = now()
     where run_id = $1`,
    [change.runId, change.version, change.nodeId],
  );
  const removed = change.deletes.filter((p) => archived.has(p)).length;
  const changed = change.upserts.filter((f) => archived.has(f.path)).length;
  const counts = { added: change.upserts.length - changed, changed, removed };
  const origin = change.origin ?? { source: 'action' };
  await tx.execute(
    `insert into workspace_version (run_id, version, node_id, generation, source, action,
       command_id, call_id, restored_from, forked_from_run_id, forked_from_version,
       files_added, files_changed, files_removed)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
    [
      change.runId,
      change.version,
      change.nodeId,
      change.generation ?? null,
      origin.source,
      origin.action ?? null,
      origin.commandId ?? null,
      origin.callId ?? null,
      origin.restoredFrom ?? null,
      origin.forkedFrom?.runId ?? null,
      origin.forkedFrom?.version ?? null,
      counts.added,
      counts.changed,
      counts.removed,
    ],
  );
  return counts;
}

/**
 * Commits a change in one transaction and returns the new version: either every row
 * changes and the version moves, or nothing does. With `expectedVersion`, a manifest
 * that moved on meanwhile refuses the commit with `conflict`. Workspace sync commits
 * through its own fenced merge; this plain form serves tests and tools.
 */
export async function commitManifestChange(db: Db, change: ManifestChange): Promise<number> {
  return db.transaction(async (tx) => {
    const current = (await lockManifest(tx, change.runId)).version;
    if (change.expectedVersion !== undefined && change.expectedVersion !== current) {
      throw new StoreError(
        'conflict',
        `manifest of run "${change.runId}" is at version ${current}, not ${change.expectedVersion}`,
      );
    }
    const version = current + 1;
    await applyManifestChange(tx, { ...change, version });
    return version;
  });
}

/** A run's manifest head and the holder of its live workspace, read together. */
export interface WorkspaceHead {
  /** The manifest's version; 0 before the first commit. */
  version: number;
  updatedByNode: string | null;
  /** The live workspace row's node and generation; null when the run has none. */
  holder: { nodeId: string | null; generation: number } | null;
}

/**
 * The columns of a run's {@link WorkspaceHead} (`head_version`, `head_updated_by_node`,
 * `head_node_id`, `head_generation`) as a lateral subquery named `wh`, for the run whose
 * id is the SQL expression `runId`; {@link headOfRow} decodes them.
 */
export function workspaceHeadJoin(runId: string): string {
  return `left join lateral (
       select m.version as head_version, m.updated_by_node as head_updated_by_node,
              w.node_id as head_node_id, w.generation as head_generation
       from (select ${runId} as run_id) k
       left join workspace_manifest m on m.run_id = k.run_id
       left join workbench_workspace w on w.run_id = k.run_id and w.status = 'provisioned'
       limit 1) wh on true`;
}

/**
 * The columns of {@link workspaceHeadJoin}, all null: for a branch of a union whose
 * rows carry no head beside one whose rows do.
 */
export const NO_HEAD_COLUMNS =
  'null as head_version, null as head_updated_by_node, null as head_node_id, null as head_generation';

/** Decodes the columns of {@link workspaceHeadJoin}. */
export function headOfRow(r: Record<string, unknown>): WorkspaceHead {
  return {
    version: r.head_version === null || r.head_version === undefined ? 0 : Number(r.head_version),
    updatedByNode: textOrNull(r.head_updated_by_node),
    holder:
      r.head_generation === null || r.head_generation === undefined
        ? null
        : { nodeId: textOrNull(r.head_node_id), generation: Number(r.head_generation) },
  };
}

/**
 * The manifest head and the workspace's holder in one round trip: what a node reads
 * before every action to learn whether its copy is current and whether it still holds
 * the workspace. A command's claim reads it too (`claimedHead`).
 */
export async function getWorkspaceHead(q: Queryable, runId: string): Promise<WorkspaceHead> {
  const rows = await q.query(`select wh.* from (select 1) one ${workspaceHeadJoin('$1::text')}`, [
    runId,
  ]);
  return headOfRow(rows[0] ?? {});
}

/** The content hashes a run's manifest still refers to. */
export async function listManifestHashes(q: Queryable, runId: string): Promise<string[]> {
  const rows = await q.query(
    'select distinct hash from workspace_file where run_id = $1 order by hash',
    [runId],
  );
  return rows.map((r) => String(r.hash));
}

/** Removes a run's manifest entirely, with its history (run deletion). */
export async function deleteManifest(q: Queryable, runId: string): Promise<void> {
  await q.execute('delete from workspace_file_conflict where run_id = $1', [runId]);
  await q.execute('delete from workspace_version where run_id = $1', [runId]);
  await q.execute('delete from workspace_file_history where run_id = $1', [runId]);
  await q.execute('delete from workspace_file where run_id = $1', [runId]);
  await q.execute('delete from workspace_manifest where run_id = $1', [runId]);
}
