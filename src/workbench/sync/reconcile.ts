/**
 * A run's directory brought to its durable copy: {@link hydrateWorkspace} fills a
 * fresh or evicted directory with every file of the manifest, and
 * {@link reconcileWorkspace}, before each action, makes the directory match the head
 * (one head query when nobody else has committed since this node last synced). Both
 * check each download against the manifest's hash, and give files their mode and mtime
 * so the next scan finds them unchanged without reading them.
 *
 * @module
 */

import { chown, mkdir } from 'node:fs/promises';
import { getManifest, getWorkspaceHead, type Manifest } from '../../store/index.js';
import { type BaseSnapshot, snapshotOf } from './base-snapshot.js';
import { decideReconcile, planReconcile } from './diff.js';
import { translateSyncError } from './errors.js';
import { downloadFiles, fixMetadata, removeEntries, removeUnreachable } from './materialize.js';
import { scanWorkspace } from './scan.js';
import {
  hashAll,
  materializeTarget,
  type WorkspaceSyncDeps,
  type WorkspaceTarget,
  withHashes,
} from './sync-deps.js';

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

/** Creates the directory when missing, owned as `deps.owner` says. */
async function prepareDir(deps: WorkspaceSyncDeps, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o755 });
  if (deps.owner) await chown(dir, deps.owner.uid, deps.owner.gid);
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
    /**
     * When `base` is undefined: the version the directory matched when the warm cache
     * shed its snapshot. If the head is still that version, the manifest is read back
     * (one query) instead of the directory being compared in full.
     */
    mark?: { version: number; updatedByNode: string | null };
    head?: { version: number; updatedByNode: string | null };
  },
): Promise<ReconcileResult> {
  try {
    const head = target.head ?? (await getWorkspaceHead(deps.db, target.runId));
    const known = target.base;
    const last = known ?? target.mark;
    const decision = decideReconcile(head, {
      nodeId: target.nodeId,
      lastSyncedVersion: last?.version,
      lastSyncedBy: last?.updatedByNode ?? null,
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
    // Version 0 holds no file (every commit moves the head to 1 or more, and nothing
    // moves it back), so a run's first reconcile reads nothing more than its head.
    const manifest: Manifest =
      head.version === 0
        ? { runId: target.runId, version: 0, updatedByNode: head.updatedByNode, files: [] }
        : await getManifest(deps.db, target.runId);
    if (
      known === undefined &&
      target.mark !== undefined &&
      decision === 'current' &&
      manifest.version === target.mark.version &&
      manifest.updatedByNode === target.mark.updatedByNode
    ) {
      return {
        version: manifest.version,
        updatedByNode: manifest.updatedByNode,
        mode: 'current',
        base: snapshotOf(manifest),
        downloaded: 0,
        bytesDownloaded: 0,
        removed: 0,
        kept: 0,
        hashed: 0,
      };
    }
    const result = await reconcileFull(deps, target, manifest);
    const { base: _base, ...logged } = result;
    deps.log.info({ runId: target.runId, ...logged }, 'workspace reconciled');
    return result;
  } catch (err) {
    throw translateSyncError(err, 'reconcile', target.runId);
  }
}
