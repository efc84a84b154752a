/**
 * Durable workspace files. The durable copy of a run's workspace is its manifest in
 * Postgres (path, hash, size, mode, mtime per file) plus the content in the object
 * store (`runs/<runId>/blobs/<sha256>`, see `blobs.ts`); a node's directory is a
 * warm cache of it.
 *
 * - {@link reconcileWorkspace}, before each action: one head query when nobody else
 *   has committed since this node last synced; otherwise make the directory match.
 *   Either way it returns the {@link BaseSnapshot} the directory now matches.
 * - {@link syncWorkspace}, after each mutating action: scan, diff against that base
 *   (what this action changed, never what others committed meanwhile), hash what the
 *   quick check cannot vouch for, upload content the store lacks, then commit the
 *   change as a fenced three-way merge onto the head (`commit.ts`). Uploads come
 *   first and the commit last, so a failure anywhere leaves the durable copy as it was.
 * - {@link hydrateWorkspace}, for a fresh or evicted directory: download every file.
 *
 * What is durable, and the quick check, are described in `diff.ts`.
 * Failures of Postgres or the object store are thrown as
 * `WorkbenchError('unavailable')` with `payload.reason` (`errors.ts`). The
 * caller runs at most one of these at a time per run.
 *
 * @module
 */

import { chown, mkdir, realpath } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ObjectStore } from '../../objects/index.js';
import {
  type Db,
  getManifest,
  getWorkspaceHead,
  type Manifest,
  type ManifestFile,
  recordBlobUploads,
  type VersionOrigin,
} from '../../store/index.js';
import type { Logger } from '../../telemetry/index.js';
import {
  blobKey,
  type FileHasher,
  SMALL_BLOB_BYTES,
  sha256WorkspaceFile,
  uploadBlob,
} from './blobs.js';
import { commitChanges } from './commit.js';
import { decideReconcile, type LocalFile, planReconcile, planSync, planUploads } from './diff.js';
import { FileChangedDuringSync, translateSyncError } from './errors.js';
import {
  downloadFiles,
  fixMetadata,
  type MaterializeTarget,
  removeEntries,
  removeUnreachable,
} from './materialize.js';
import type { LocalChange } from './merge.js';
import { DEFAULT_SYNC_CONCURRENCY, mapLimit } from './pool.js';
import { type RefusalReport, reportRefusals, scanWorkspace } from './scan.js';
import { overQuota, quotaError, usageOf, type WorkspaceQuota } from './workspace-quota.js';

/** What sync, hydrate and reconcile are built from. */
export interface WorkspaceSyncDeps {
  db: Db;
  objects: ObjectStore;
  log: Logger;
  /**
   * Owner given to every file and directory that hydrate and reconcile write (the
   * sandbox uid when the node runs as root). Omitted: the node's own user.
   */
  owner?: { uid: number; gid: number };
  /** Files hashed, uploaded or downloaded at once. Default {@link DEFAULT_SYNC_CONCURRENCY}. */
  concurrency?: number;
  /**
   * Directory for downloads in progress; must be on the workspace's filesystem.
   * Default: `.memql-sync-tmp` beside the workspace directory (in the workbench root,
   * where no run directory can have that name: run ids start with a letter or digit).
   */
  tempDir?: string;
  /** Reads and hashes a file. Default {@link sha256WorkspaceFile}; tests wrap it to watch reads. */
  hashFile?: FileHasher;
  /**
   * What one workspace may hold. A sync whose directory is over it commits nothing
   * (`workspace_quota_exceeded`). Omitted: no limit.
   */
  quota?: WorkspaceQuota;
  /**
   * Bytes the quota counts besides the directory's files: the run's staged uploads
   * (`actions/upload-stages.ts`). Omitted: none.
   */
  stagedBytes?: (runId: string) => Promise<number>;
}

/**
 * The manifest version a directory was reconciled from, with its entries: the base of
 * the next sync's three-way merge. Held in the warm cache beside the directory.
 */
export interface BaseSnapshot {
  version: number;
  /** The node that had committed `version`. */
  updatedByNode: string | null;
  /** The entries at `version`, by path. */
  files: Map<string, ManifestFile>;
}

/** The snapshot of a manifest read in full. */
export function snapshotOf(manifest: Manifest): BaseSnapshot {
  return {
    version: manifest.version,
    updatedByNode: manifest.updatedByNode,
    files: new Map(manifest.files.map((f) => [f.path, f])),
  };
}

/** The snapshot of a run with no commit yet: version 0, no files. */
export function emptySnapshot(): BaseSnapshot {
  return { version: 0, updatedByNode: null, files: new Map() };
}

/** Which run's directory to act on. */
export interface WorkspaceTarget {
  runId: string;
  /** The workspace directory, `$MEMQL_WORKBENCH_ROOT/<runId>`. */
  dir: string;
}

/** What {@link syncWorkspace} did. */
export interface SyncResult {
  /** The manifest version the durable copy is at now. */
  version: number;
  /** The node that committed `version`. */
  updatedByNode: string | null;
  /** Blobs put into the object store. */
  uploaded: number;
  /** Bytes put into the object store. */
  bytesUploaded: number;
  /** Manifest entries written (new files, new content, new mode or mtime). */
  changed: number;
  /** Manifest entries removed. */
  deleted: number;
  /** Files whose manifest entry stayed as it was. */
  unchanged: number;
  /** Files read to hash them. */
  hashed: number;
  /** Local entries that are not durable (links, sockets, fifos, devices), left out. */
  skipped: number;
  /**
   * Local entries too deep to reach (host path over PATH_MAX), left out with
   * everything below them; the rest of the directory synced as usual.
   */
  refused: RefusalReport;
  /**
   * False when another node committed since the base and this change was merged onto
   * its version: the durable copy then holds files this directory lacks, so the caller
   * must not keep `base`; the next reconcile is full.
   */
  dirMatchesVersion: boolean;
  /** Paths both sides changed; the loser of each is recorded (see `merge.ts`). */
  conflicts: number;
  /** False when this node no longer held the workspace at its generation (fenced). */
  holder: boolean;
  /** The snapshot the directory matches now, when `dirMatchesVersion`. */
  base: BaseSnapshot | null;
}

/** What a sync commits from, and under which generation. */
export interface SyncTarget extends WorkspaceTarget {
  nodeId: string;
  /** The generation this node holds the workspace at (the fencing token). */
  generation: number;
  /** What the directory was reconciled from (from {@link reconcileWorkspace}). */
  base: BaseSnapshot;
  /** What makes the version this sync commits, if it commits one. */
  origin?: VersionOrigin;
}

/** What {@link hydrateWorkspace} did. */
export interface HydrateResult {
  /** The manifest version the directory now holds. */
  version: number;
  updatedByNode: string | null;
  downloaded: number;
  bytesDownloaded: number;
}

/** What {@link reconcileWorkspace} did. */
export interface ReconcileResult {
  /** The manifest version the directory now matches. */
  version: number;
  updatedByNode: string | null;
  /** `current`: one head query showed nothing to do. `full`: the directory was compared. */
  mode: 'current' | 'full';
  downloaded: number;
  bytesDownloaded: number;
  /** Local entries removed because the manifest does not have them. */
  removed: number;
  /** Files that already matched. */
  kept: number;
  /** Local files read to compare their content. */
  hashed: number;
  /** The snapshot the directory matches now. */
  base: BaseSnapshot;
}

/** Sync attempts when files change under the read that uploads them. */
const SYNC_ATTEMPTS = 2;

function settings(deps: WorkspaceSyncDeps, target: WorkspaceTarget) {
  return {
    concurrency: deps.concurrency ?? DEFAULT_SYNC_CONCURRENCY,
    hashFile: deps.hashFile ?? sha256WorkspaceFile,
    tempDir: deps.tempDir ?? join(dirname(target.dir), '.memql-sync-tmp'),
  };
}

/** Hashes `files` and returns them with `hash` filled in. */
async function hashAll(
  deps: WorkspaceSyncDeps,
  target: WorkspaceTarget,
  files: readonly LocalFile[],
): Promise<LocalFile[]> {
  const { concurrency, hashFile } = settings(deps, target);
  if (files.length === 0) return [];
  const realRoot = await realpath(target.dir);
  return mapLimit(files, concurrency, async (f) => ({
    ...f,
    hash: await hashFile({ rel: f.path, size: f.size, root: target.dir, realRoot }),
  }));
}

/** Replaces scanned files by their hashed versions, where there is one. */
function withHashes(local: readonly LocalFile[], hashed: readonly LocalFile[]): LocalFile[] {
  const byPath = new Map(hashed.map((f) => [f.path, f]));
  return local.map((f) => byPath.get(f.path) ?? f);
}

async function syncOnce(deps: WorkspaceSyncDeps, target: SyncTarget): Promise<SyncResult> {
  const { runId, dir, nodeId, base } = target;
  const scan = await scanWorkspace(dir);
  if (!scan.exists) {
    // Committing an empty scan would delete every file of the run.
    throw new Error(`workspace directory ${dir} of run "${runId}" is missing; nothing to sync`);
  }
  if (deps.quota) {
    const usage = usageOf(scan.files);
    usage.bytes += (await deps.stagedBytes?.(runId)) ?? 0;
    const over = overQuota(usage, deps.quota);
    if (over) throw quotaError(runId, over, usage, deps.quota, 'this change');
  }
  const first = planSync(base.files, scan.files);
  const hashed = await hashAll(deps, target, first.needHash);
  const plan = planSync(base.files, withHashes(scan.files, hashed));
  const uploads = planUploads(base.files, plan.upserts);

  const { concurrency } = settings(deps, target);
  const realRoot = uploads.length > 0 ? await realpath(dir) : dir;
  // Recorded before they are put, so the collector leaves them until the commit.
  const uploaded = uploads.map((u) => u.hash);
  await recordBlobUploads(deps.db, runId, uploaded);
  // Bytes put per planned blob; null when the store already held it. Asking first
  // (one round trip) only pays for a blob big enough that the transfer costs more.
  const sent = await mapLimit(uploads, concurrency, async (u) => {
    const key = blobKey(runId, u.hash);
    if (u.size > SMALL_BLOB_BYTES) {
      const there = await deps.objects.head(key);
      if (there !== null && there.size === u.size) return null;
    }
    const file = { rel: u.path, size: u.size, root: dir, realRoot };
    return uploadBlob(deps.objects, key, u.hash, file);
  });
  const put = sent.filter((n): n is number => n !== null);

  const result: SyncResult = {
    version: base.version,
    updatedByNode: base.updatedByNode,
    uploaded: put.length,
    bytesUploaded: put.reduce((sum, n) => sum + n, 0),
    changed: plan.upserts.length,
    deleted: plan.deletes.length,
    unchanged: plan.unchanged.length,
    hashed: first.needHash.length,
    skipped: scan.others.length,
    refused: reportRefusals(scan.refused),
    dirMatchesVersion: true,
    conflicts: 0,
    holder: true,
    base,
  };
  if (plan.upserts.length === 0 && plan.deletes.length === 0) return result;

  const changes: LocalChange[] = [
    ...plan.upserts.map((entry) => ({
      path: entry.path,
      entry,
      base: base.files.get(entry.path) ?? null,
    })),
    ...plan.deletes.map((path) => ({ path, entry: null, base: base.files.get(path) ?? null })),
  ];
  const commit = await commitChanges(deps.db, {
    runId,
    nodeId,
    generation: target.generation,
    baseVersion: base.version,
    changes,
    uploaded,
    ...(target.origin ? { origin: target.origin } : {}),
  });
  result.version = commit.version;
  result.updatedByNode = nodeId;
  result.conflicts = commit.plan.conflicts.length;
  result.holder = commit.holder;
  if (commit.headMoved) {
    deps.log.warn(
      {
        runId,
        nodeId,
        generation: target.generation,
        holder: commit.holder,
        baseVersion: base.version,
        version: commit.version,
        conflicts: commit.plan.conflicts.length,
      },
      'workspace manifest moved since this copy was reconciled: merged this change onto it',
    );
    result.dirMatchesVersion = false;
    result.base = null;
    return result;
  }
  // Nobody else committed: the directory is exactly the new version.
  for (const entry of commit.plan.upserts) base.files.set(entry.path, entry);
  for (const path of commit.plan.deletes) base.files.delete(path);
  base.version = commit.version;
  base.updatedByNode = nodeId;
  return result;
}

/**
 * Commits what changed in the directory since `target.base`: uploads new content,
 * then merges the changes onto the manifest head in one fenced transaction. Commits
 * nothing when nothing changed. A file that changes while it is being uploaded
 * restarts the sync once. On success with `dirMatchesVersion`, `target.base` is
 * updated in place to the new version. Throws `WorkbenchError('unavailable')` when
 * Postgres or the object store fails, and `run_ended` when the workspace was
 * released meanwhile; the manifest is then unchanged.
 */
export async function syncWorkspace(
  deps: WorkspaceSyncDeps,
  target: SyncTarget,
): Promise<SyncResult> {
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await syncOnce(deps, target);
        deps.log[result.changed + result.deleted > 0 ? 'info' : 'debug'](
          { runId: target.runId, ...result },
          'workspace synced',
        );
        return result;
      } catch (err) {
        if (!(err instanceof FileChangedDuringSync) || attempt >= SYNC_ATTEMPTS) throw err;
      }
    }
  } catch (err) {
    throw translateSyncError(err, 'sync', target.runId);
  }
}

async function prepareDir(deps: WorkspaceSyncDeps, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o755 });
  if (deps.owner) await chown(dir, deps.owner.uid, deps.owner.gid);
}

/** Where and how downloads into a run's directory go. */
export function materializeTarget(
  deps: WorkspaceSyncDeps,
  target: WorkspaceTarget,
): MaterializeTarget {
  const { concurrency, tempDir } = settings(deps, target);
  return {
    runId: target.runId,
    dir: target.dir,
    tempDir,
    objects: deps.objects,
    concurrency,
    ...(deps.owner ? { owner: deps.owner } : {}),
  };
}

/**
 * Writes every file of the manifest into the directory (created if missing), with
 * its mode and mtime, so the next scan finds them unchanged without reading them.
 * Each download is checked against the manifest's hash. Local files the manifest
 * lacks are left alone: use it on a fresh or evicted directory, and
 * {@link reconcileWorkspace} on one that may hold stale files.
 */
export async function hydrateWorkspace(
  deps: WorkspaceSyncDeps,
  target: WorkspaceTarget,
): Promise<HydrateResult> {
  try {
    const manifest = await getManifest(deps.db, target.runId);
    await prepareDir(deps, target.dir);
    const counts = await downloadFiles(materializeTarget(deps, target), manifest.files);
    deps.log.info(
      { runId: target.runId, version: manifest.version, files: counts.files, bytes: counts.bytes },
      'workspace hydrated',
    );
    return {
      version: manifest.version,
      updatedByNode: manifest.updatedByNode,
      downloaded: counts.files,
      bytesDownloaded: counts.bytes,
    };
  } catch (err) {
    throw translateSyncError(err, 'hydrate', target.runId);
  }
}

async function reconcileFull(
  deps: WorkspaceSyncDeps,
  target: WorkspaceTarget,
  manifest: Manifest,
): Promise<ReconcileResult> {
  await prepareDir(deps, target.dir);
  const scan = await scanWorkspace(target.dir);
  const first = planReconcile(manifest.files, scan.files, scan.others);
  const hashed = await hashAll(deps, target, first.needHash);
  const plan = planReconcile(manifest.files, withHashes(scan.files, hashed), scan.others);
  const materialize = materializeTarget(deps, target);
  // Removals first: a stale file may stand where a manifest file needs a directory.
  const unreachable = scan.refused.map((r) => r.path);
  const removed =
    (await removeEntries(target.dir, plan.remove)) +
    (await removeUnreachable(target.dir, unreachable));
  await fixMetadata(materialize, plan.fixMetadata);
  const counts = await downloadFiles(materialize, plan.download);
  return {
    version: manifest.version,
    updatedByNode: manifest.updatedByNode,
    mode: 'full',
    base: snapshotOf(manifest),
    downloaded: counts.files,
    bytesDownloaded: counts.bytes,
    removed,
    kept: plan.keep.length + plan.fixMetadata.length,
    hashed: first.needHash.length,
  };
}

/**
 * Brings the directory up to the durable copy before an action. When the manifest
 * head is the version of `base` (what this node last reconciled or synced, committed
 * by the same node), that one query is all. Otherwise the directory is scanned and
 * made to match: files with other content, or missing, are downloaded; local files,
 * links and other entries the manifest lacks are removed (links are removed, never
 * followed), and so are entries too deep to sync, with everything below them;
 * matching files are not touched. Empty directories are left alone. A missing
 * directory is created and filled, as by {@link hydrateWorkspace}. `head`, when the
 * caller has just read it, saves the query.
 */
export async function reconcileWorkspace(
  deps: WorkspaceSyncDeps,
  target: WorkspaceTarget & {
    nodeId: string;
    base: BaseSnapshot | undefined;
    head?: { version: number; updatedByNode: string | null };
  },
): Promise<ReconcileResult> {
  try {
    const head = target.head ?? (await getWorkspaceHead(deps.db, target.runId));
    const known = target.base;
    const decision = decideReconcile(head, {
      nodeId: target.nodeId,
      lastSyncedVersion: known?.version,
      lastSyncedBy: known?.updatedByNode ?? null,
    });
    if (known !== undefined && decision === 'current') {
      return {
        version: head.version,
        updatedByNode: head.updatedByNode,
        mode: 'current',
        base: known,
        downloaded: 0,
        bytesDownloaded: 0,
        removed: 0,
        kept: 0,
        hashed: 0,
      };
    }
    const manifest = await getManifest(deps.db, target.runId);
    const result = await reconcileFull(deps, target, manifest);
    const { base: _base, ...logged } = result;
    deps.log.info({ runId: target.runId, ...logged }, 'workspace reconciled');
    return result;
  } catch (err) {
    throw translateSyncError(err, 'reconcile', target.runId);
  }
}
