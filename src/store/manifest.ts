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

function toFile(r: Record<string, unknown>): ManifestFile {
  return {
    path: String(r.path),
    hash: String(r.hash),
    size: Number(r.size),
    mode: Number(r.mode),
    mtimeMs: Number(r.mtime_ms),
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
      `select path, hash, size, mode, mtime_ms from workspace_file
       where run_id = $1 order by path`,
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
      `select path, hash, size, mode, mtime_ms, version from workspace_file
       where run_id = $1 and path = any($2::text[])`,
      [runId, paths.slice(i, i + UPSERT_BATCH * 5)],
    );
    for (const r of rows) out.set(String(r.path), { ...toFile(r), version: Number(r.version) });
  }
  return out;
}

/**
 * Writes `upserts` and removes `deletes` at `version` (the locked head plus one) and
 * moves the head there. Call inside the transaction that ran {@link lockManifest}.
 */
export async function applyManifestChange(
  tx: Queryable,
  change: {
    runId: string;
    nodeId: string;
    version: number;
    upserts: ManifestFile[];
    deletes: string[];
  },
): Promise<void> {
  if (change.deletes.length > 0) {
    await tx.execute('delete from workspace_file where run_id = $1 and path = any($2::text[])', [
      change.runId,
      change.deletes,
    ]);
  }
  for (let i = 0; i < change.upserts.length; i += UPSERT_BATCH) {
    const batch = change.upserts.slice(i, i + UPSERT_BATCH);
    await tx.execute(
      `insert into workspace_file (run_id, path, hash, size, mode, mtime_ms, version)
       select $1, f.path, f.hash, f.size, f.mode, f.mtime_ms, $7
       from unnest($2::text[], $3::text[], $4::int8[], $5::int4[], $6::int8[])
         as f(path, hash, size, mode, mtime_ms)
       on conflict (run_id, path) do update set hash = excluded.hash, size = excluded.size,
         mode = excluded.mode, mtime_ms = excluded.mtime_ms, version = excluded.version`,
      [
        change.runId,
        batch.map((f) => f.path),
        batch.map((f) => f.hash),
        batch.map((f) => f.size),
        batch.map((f) => f.mode),
        batch.map((f) => Math.trunc(f.mtimeMs)),
        change.version,
      ],
    );
  }
  await tx.execute(
    `update workspace_manifest set version = $2, updated_by_node = $3, updated_at = now()
     where run_id = $1`,
    [change.runId, change.version, change.nodeId],
  );
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

/**
 * The manifest head and the workspace's holder in one round trip: what a node reads
 * before every action to learn whether its copy is current and whether it still holds
 * the workspace.
 */
export async function getWorkspaceHead(
  q: Queryable,
  runId: string,
): Promise<{
  version: number;
  updatedByNode: string | null;
  holder: { nodeId: string | null; generation: number } | null;
}> {
  const rows = await q.query(
    `select m.version, m.updated_by_node, w.node_id, w.generation
     from (select $1::text as run_id) k
     left join workspace_manifest m on m.run_id = k.run_id
     left join workbench_workspace w on w.run_id = k.run_id and w.status = 'provisioned'`,
    [runId],
  );
  const r = rows[0] ?? {};
  return {
    version: r.version === null || r.version === undefined ? 0 : Number(r.version),
    updatedByNode: textOrNull(r.updated_by_node),
    holder:
      r.generation === null || r.generation === undefined
        ? null
        : { nodeId: textOrNull(r.node_id), generation: Number(r.generation) },
  };
}

/** The content hashes a run's manifest still refers to. */
export async function listManifestHashes(q: Queryable, runId: string): Promise<string[]> {
  const rows = await q.query(
    'select distinct hash from workspace_file where run_id = $1 order by hash',
    [runId],
  );
  return rows.map((r) => String(r.hash));
}

/** Removes a run's manifest entirely (run deletion). */
export async function deleteManifest(q: Queryable, runId: string): Promise<void> {
  await q.execute('delete from workspace_file_conflict where run_id = $1', [runId]);
  await q.execute('delete from workspace_file where run_id = $1', [runId]);
  await q.execute('delete from workspace_manifest where run_id = $1', [runId]);
}
