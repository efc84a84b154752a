/**
 * Durable workspace files. The durable copy of a run's workspace is its manifest in
 * Postgres (path, hash, size, mode, mtime per file) plus the content in the object
 * store (`runs/<runId>/blobs/<sha256>`, see `blobs.ts`); a node's directory is a
 * warm cache of it.
 *
 * - `reconcileWorkspace` (`reconcile.ts`), before each action: one head query when
 *   nobody else has committed since this node last synced; otherwise make the
 *   directory match. Either way it returns the {@link BaseSnapshot} the directory now
 *   matches.
 * - {@link syncWorkspace}, after each mutating action: scan, diff against that base
 *   (what this action changed, never what others committed meanwhile), hash what the
 *   quick check cannot vouch for, upload content the store lacks, then commit the
 *   change as a fenced three-way merge onto the head (`commit.ts`). Uploads come
 *   first and the commit last, so a failure anywhere leaves the durable copy as it was.
 * - `hydrateWorkspace` (`reconcile.ts`), for a fresh or evicted directory: download
 *   every file.
 *
 * What is durable, and the quick check, are described in `diff.ts`.
 * Failures of Postgres or the object store are thrown as
 * `WorkbenchError('unavailable')` with `payload.reason` (`errors.ts`). The
 * caller runs at most one of these at a time per run.
 *
 * @module
 */

import { realpath } from 'node:fs/promises';
import { recordBlobUploads, type VersionOrigin } from '../../store/index.js';
import type { BaseSnapshot } from './base-snapshot.js';
import { blobKey, SMALL_BLOB_BYTES, uploadBlob } from './blobs.js';
import { commitChanges } from './commit.js';
import { planSync, planUploads } from './diff.js';
import { FileChangedDuringSync, translateSyncError } from './errors.js';
import type { LocalChange } from './merge.js';
import { mapLimit } from './pool.js';
import { type RefusalReport, reportRefusals, scanWorkspace } from './scan.js';
import {
  hashAll,
  settings,
  type WorkspaceSyncDeps,
  type WorkspaceTarget,
  withHashes,
} from './sync-deps.js';
import { overQuota, quotaError, usageOf } from './workspace-quota.js';

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
  /** What the directory was reconciled from (from `reconcileWorkspace`). */
  base: BaseSnapshot;
  /** What makes the version this sync commits, if it commits one. */
  origin?: VersionOrigin;
}

/** Sync attempts when files change under the read that uploads them. */
const SYNC_ATTEMPTS = 2;

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
