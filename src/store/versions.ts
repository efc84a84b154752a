/**
 * A run's workspace history: the version rows each manifest commit writes
 * (`manifest.ts`, {@link applyManifestChange}), labels (checkpoints), the manifest as
 * it stood at a kept version, and the difference between two versions.
 *
 * The manifest at version V is the current entries written at V or before, and the
 * history entries current at V (written at or before V, replaced or removed after it).
 * A version is kept while its row is: retention removes rows (and the history only
 * they needed), never a labelled one.
 *
 * @module
 */

import type { VersionSource, VersionView } from '../contract/index.js';
import type { BlobRef } from './blob-refs.js';
import type { Db, Queryable } from './db.js';
import { FILE_COLUMNS, type ManifestFile, toFile } from './manifest.js';
import { date, textOrNull } from './rows.js';
import { createRun, type NewRun, type Run } from './runs.js';

const VERSION_COLUMNS = `version, created_at, node_id, generation, source, action, command_id,
  call_id, restored_from, forked_from_run_id, forked_from_version, files_added, files_changed,
  files_removed, label`;

function numberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

function toVersion(r: Record<string, unknown>): VersionView {
  const forkedRun = textOrNull(r.forked_from_run_id);
  return {
    version: Number(r.version),
    createdAt: date(r.created_at).toISOString(),
    nodeId: textOrNull(r.node_id),
    generation: numberOrNull(r.generation),
    source: String(r.source) as VersionSource,
    action: textOrNull(r.action),
    commandId: textOrNull(r.command_id),
    callId: textOrNull(r.call_id),
    restoredFrom: numberOrNull(r.restored_from),
    forkedFrom:
      forkedRun === null ? null : { runId: forkedRun, version: Number(r.forked_from_version) },
    added: Number(r.files_added),
    changed: Number(r.files_changed),
    removed: Number(r.files_removed),
    label: textOrNull(r.label),
  };
}

/** A page of a run's versions, newest first. */
export async function listVersions(
  q: Queryable,
  runId: string,
  options: { limit: number; before?: number; labelled?: boolean },
): Promise<{ versions: VersionView[]; next: number | null }> {
  const rows = await q.query(
    `select ${VERSION_COLUMNS} from workspace_version
     where run_id = $1 and ($2::bigint is null or version < $2::bigint)
       and (not $3 or label is not null)
     order by version desc limit $4`,
    [runId, options.before ?? null, options.labelled === true, options.limit + 1],
  );
  const versions = rows.slice(0, options.limit).map(toVersion);
  const more = rows.length > options.limit;
  return { versions, next: more ? (versions.at(-1)?.version ?? null) : null };
}

/** One kept version; null when the run has no such version (any more). */
export async function getVersion(
  q: Queryable,
  runId: string,
  version: number,
): Promise<VersionView | null> {
  const rows = await q.query(
    `select ${VERSION_COLUMNS} from workspace_version where run_id = $1 and version = $2`,
    [runId, version],
  );
  return rows[0] ? toVersion(rows[0]) : null;
}

/** The version a label names; null when no version of the run has it. */
export async function findLabel(
  q: Queryable,
  runId: string,
  label: string,
): Promise<number | null> {
  const rows = await q.query(
    'select version from workspace_version where run_id = $1 and label = $2',
    [runId, label],
  );
  return rows[0] ? Number(rows[0].version) : null;
}

/** What {@link setLabel} did. */
export type LabelOutcome =
  | { readonly kind: 'labelled'; readonly version: VersionView }
  /** No kept version has that number. */
  | { readonly kind: 'no_version' }
  /** The label names another version. */
  | { readonly kind: 'taken'; readonly version: number };

/** Labels a kept version (a label names one version of a run at most). */
export async function setLabel(
  q: Queryable,
  runId: string,
  version: number,
  label: string,
): Promise<LabelOutcome> {
  const holder = await findLabel(q, runId, label);
  if (holder !== null && holder !== version) return { kind: 'taken', version: holder };
  const rows = await q.query(
    `update workspace_version set label = $3, labelled_at = now()
     where run_id = $1 and version = $2
     returning ${VERSION_COLUMNS}`,
    [runId, version, label],
  );
  return rows[0] ? { kind: 'labelled', version: toVersion(rows[0]) } : { kind: 'no_version' };
}

/** Removes a label; the version it named, or null when no version had it. */
export async function removeLabel(
  q: Queryable,
  runId: string,
  label: string,
): Promise<VersionView | null> {
  const rows = await q.query(
    `update workspace_version set label = null, labelled_at = null
     where run_id = $1 and label = $2
     returning ${VERSION_COLUMNS}`,
    [runId, label],
  );
  return rows[0] ? toVersion(rows[0]) : null;
}

/**
 * The entries of run `$1` at the version in parameter `version` (`$2`, say), as a SQL
 * relation: the current entries written then or before, and the history's entries
 * current then.
 */
export function manifestAtSql(version: string): string {
  return `
  select ${FILE_COLUMNS} from workspace_file where run_id = $1 and version <= ${version}
  union all
  select ${FILE_COLUMNS} from workspace_file_history
  where run_id = $1 and from_version <= ${version} and to_version > ${version}`;
}

/** The manifest at a version, ordered by path. Check the version is kept first. */
export async function manifestAt(
  q: Queryable,
  runId: string,
  version: number,
): Promise<ManifestFile[]> {
  const rows = await q.query(`select * from (${manifestAtSql('$2::bigint')}) m order by path`, [
    runId,
    version,
  ]);
  return rows.map(toFile);
}

/** One side of a difference. */
export interface DiffRowSide {
  hash: string;
  size: number;
  mode: number;
}

/** One path that differs between two versions. */
export interface DiffRow {
  path: string;
  from: DiffRowSide | null;
  to: DiffRowSide | null;
}

function side(hash: unknown, size: unknown, mode: unknown): DiffRowSide | null {
  return hash === null || hash === undefined
    ? null
    : { hash: String(hash), size: Number(size), mode: Number(mode) };
}

/**
 * The paths whose content or mode differ between versions `from` and `to` of a run
 * (both kept), ordered by path, after `after`, at most `limit`; with the counts of the
 * whole difference.
 */
export async function diffVersions(
  q: Queryable,
  runId: string,
  options: { from: number; to: number; limit: number; after?: string },
): Promise<{ rows: DiffRow[]; added: number; changed: number; removed: number }> {
  const joined = `
    with a as (${manifestAtSql('$2::bigint')}), b as (${manifestAtSql('$3::bigint')})
    select coalesce(a.path, b.path) as path, a.hash as a_hash, a.size as a_size,
      a.mode as a_mode, b.hash as b_hash, b.size as b_size, b.mode as b_mode
    from a full outer join b on a.path = b.path
    where a.path is null or b.path is null or a.hash <> b.hash or a.mode <> b.mode`;
  const counts = await q.query(
    `select count(*) filter (where d.a_hash is null)::int as added,
            count(*) filter (where d.b_hash is null)::int as removed,
            count(*) filter (where d.a_hash is not null and d.b_hash is not null)::int as changed
     from (${joined}) d`,
    [runId, options.from, options.to],
  );
  const rows = await q.query(
    `select * from (${joined}) d where $4::text is null or d.path > $4::text
     order by d.path limit $5`,
    [runId, options.from, options.to, options.after ?? null, options.limit],
  );
  const c = counts[0] ?? {};
  return {
    rows: rows.map((r) => ({
      path: String(r.path),
      from: side(r.a_hash, r.a_size, r.a_mode),
      to: side(r.b_hash, r.b_size, r.b_mode),
    })),
    added: Number(c.added ?? 0),
    changed: Number(c.changed ?? 0),
    removed: Number(c.removed ?? 0),
  };
}

/** What {@link forkRun} did. */
export type ForkOutcome =
  | { readonly kind: 'forked'; readonly run: Run; readonly files: number }
  /** The origin run is not the owner's, or was deleted. */
  | { readonly kind: 'no_run' }
  /** The origin keeps no such version. */
  | { readonly kind: 'no_version' };

/**
 * Makes `fork`, a new run of the origin's owner, whose workspace starts at `version` of
 * run `fromRunId`: its version 1 holds the origin's entries at that version, each naming
 * the run whose blob holds its content, so no blob is copied. The origin's run row and
 * version row are read `for share`: the origin's deletion and retention wait for the
 * fork to commit, and then see its references. One transaction.
 */
export async function forkRun(
  db: Db,
  p: { fromRunId: string; ownerUserId: string; version: number; fork: NewRun },
): Promise<ForkOutcome> {
  return db.transaction(async (tx) => {
    const origin = await tx.query(
      `select id from run where id = $1 and owner_user_id = $2 and deleted_at is null for share`,
      [p.fromRunId, p.ownerUserId],
    );
    if (origin.length === 0) return { kind: 'no_run' };
    const kept = await tx.query(
      'select version from workspace_version where run_id = $1 and version = $2 for share',
      [p.fromRunId, p.version],
    );
    if (kept.length === 0) return { kind: 'no_version' };
    const run = await createRun(tx, { ...p.fork, ownerUserId: p.ownerUserId });
    await tx.execute(
      `insert into workspace_manifest (run_id, version, updated_at) values ($1, 1, now())`,
      [run.id],
    );
    const copied = await tx.query(
      `with copied as (
         insert into workspace_file (run_id, path, hash, size, mode, mtime_ms, blob_run_id, version)
         select $3, m.path, m.hash, m.size, m.mode, m.mtime_ms, coalesce(m.blob_run_id, $1), 1
         from (${manifestAtSql('$2::bigint')}) m
         returning 1
       )
       select count(*)::int as files from copied`,
      [p.fromRunId, p.version, run.id],
    );
    const files = Number(copied[0]?.files ?? 0);
    await tx.execute(
      `insert into workspace_version (run_id, version, source, forked_from_run_id,
         forked_from_version, files_added)
       values ($1, 1, 'fork', $2, $3, $4)`,
      [run.id, p.fromRunId, p.version, files],
    );
    return { kind: 'forked', run, files };
  });
}

/**
 * How long versions are kept: a version is kept while it is among the run's newest
 * `keepCount`, or younger than `keepMs`, or labelled. The current version always is.
 */
export interface VersionRetention {
  keepCount: number;
  keepMs: number;
}

/** Runs with versions past retention, at most `limit`. */
export async function runsWithExpiredVersions(
  q: Queryable,
  retention: VersionRetention,
  limit: number,
): Promise<string[]> {
  const rows = await q.query(
    `select distinct v.run_id from workspace_version v
     join workspace_manifest m on m.run_id = v.run_id
     where v.label is null and v.version <= m.version - $1
       and v.created_at < now() - make_interval(secs => $2::float8 / 1000)
     limit $3`,
    [retention.keepCount, retention.keepMs, limit],
  );
  return rows.map((r) => String(r.run_id));
}

/** What {@link pruneVersions} removed. */
export interface PrunedVersions {
  versions: number;
  /** History entries no kept version needed. */
  entries: number;
  /** The blobs those entries named: the collector's candidates. */
  blobs: BlobRef[];
}

/**
 * Removes a run's versions past retention, and the history entries no kept version
 * needs (an entry is needed while a kept version lies in its span), in one
 * transaction. A fork or restore reading a version holds its row `for share`, so this
 * waits for it and then sees what it wrote.
 */
export async function pruneVersions(
  db: Db,
  runId: string,
  retention: VersionRetention,
): Promise<PrunedVersions> {
  return db.transaction(async (tx) => {
    const gone = await tx.query(
      `with gone as (
         delete from workspace_version v
         using workspace_manifest m
         where v.run_id = $1 and m.run_id = $1 and v.label is null
           and v.version <= m.version - $2
           and v.created_at < now() - make_interval(secs => $3::float8 / 1000)
         returning 1
       )
       select count(*)::int as n from gone`,
      [runId, retention.keepCount, retention.keepMs],
    );
    const entries = await tx.query(
      `delete from workspace_file_history h
       where h.run_id = $1
         and not exists (select 1 from workspace_version v
                         where v.run_id = $1 and v.version >= h.from_version
                           and v.version < h.to_version)
       returning coalesce(h.blob_run_id, h.run_id) as r, h.hash as h`,
      [runId],
    );
    const blobs = new Map<string, BlobRef>();
    for (const e of entries) blobs.set(`${e.r}/${e.h}`, { runId: String(e.r), hash: String(e.h) });
    return {
      versions: Number(gone[0]?.n ?? 0),
      entries: entries.length,
      blobs: [...blobs.values()],
    };
  });
}

/**
 * Holds a kept version's row `for share` for the rest of transaction `q`, so retention
 * cannot remove it meanwhile; false when the version is not kept.
 */
export async function lockKeptVersion(
  q: Queryable,
  runId: string,
  version: number,
): Promise<boolean> {
  const rows = await q.query(
    'select 1 from workspace_version where run_id = $1 and version = $2 for share',
    [runId, version],
  );
  return rows.length > 0;
}

/**
 * What turns version `from` of a run into version `to`: the entries of `to` that differ
 * from `from` in anything (content, mode, time, blob), and the paths `to` lacks. Both
 * versions must be kept. Only the differences leave the database.
 */
export async function versionChanges(
  q: Queryable,
  runId: string,
  from: number,
  to: number,
): Promise<{ upserts: ManifestFile[]; deletes: string[] }> {
  const rows = await q.query(
    `with a as (${manifestAtSql('$2::bigint')}), b as (${manifestAtSql('$3::bigint')})
     select a.path as from_path, b.path, b.hash, b.size, b.mode, b.mtime_ms, b.blob_run_id
     from a full outer join b on a.path = b.path
     where a.path is null or b.path is null
        or (a.hash, a.size, a.mode, a.mtime_ms, a.blob_run_id)
           is distinct from (b.hash, b.size, b.mode, b.mtime_ms, b.blob_run_id)
     order by coalesce(b.path, a.path)`,
    [runId, from, to],
  );
  const upserts: ManifestFile[] = [];
  const deletes: string[] = [];
  for (const r of rows) {
    if (r.path === null || r.path === undefined) deletes.push(String(r.from_path));
    else upserts.push(toFile(r));
  }
  return { upserts, deletes };
}

/** A page of the manifest at a kept version, by path, after `after`. */
export async function manifestPage(
  q: Queryable,
  runId: string,
  version: number,
  options: { after?: string; limit: number },
): Promise<ManifestFile[]> {
  const rows = await q.query(
    `select * from (${manifestAtSql('$2::bigint')}) m
     where $3::text is null or m.path > $3::text order by m.path limit $4`,
    [runId, version, options.after ?? null, options.limit],
  );
  return rows.map(toFile);
}
