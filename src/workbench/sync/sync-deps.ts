/**
 * What sync, hydrate and reconcile of a run's directory share: what they are built from
 * ({@link WorkspaceSyncDeps}), which directory they act on, the settings with their
 * defaults, the hashing of the files the quick check cannot vouch for, and where
 * downloads go.
 *
 * @module
 */

import { realpath } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ObjectStore } from '../../objects/index.js';
import type { Db } from '../../store/index.js';
import type { Logger } from '../../telemetry/index.js';
import { type FileHasher, sha256WorkspaceFile } from './blobs.js';
import type { LocalFile } from './diff.js';
import type { MaterializeTarget } from './materialize.js';
import { DEFAULT_SYNC_CONCURRENCY, mapLimit } from './pool.js';
import type { WorkspaceQuota } from './workspace-quota.js';

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

/** Which run's directory to act on. */
export interface WorkspaceTarget {
  runId: string;
  /** The workspace directory, `$MEMQL_WORKBENCH_ROOT/<runId>`. */
  dir: string;
}

/** The settings sync, hydrate and reconcile use, defaults filled in. */
export function settings(deps: WorkspaceSyncDeps, target: WorkspaceTarget) {
  return {
    concurrency: deps.concurrency ?? DEFAULT_SYNC_CONCURRENCY,
    hashFile: deps.hashFile ?? sha256WorkspaceFile,
    tempDir: deps.tempDir ?? join(dirname(target.dir), '.memql-sync-tmp'),
  };
}

/** Hashes `files` and returns them with `hash` filled in. */
export async function hashAll(
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
export function withHashes(local: readonly LocalFile[], hashed: readonly LocalFile[]): LocalFile[] {
  const byPath = new Map(hashed.map((f) => [f.path, f]));
  return local.map((f) => byPath.get(f.path) ?? f);
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
