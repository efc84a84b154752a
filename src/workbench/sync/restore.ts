/**
 * Putting a held copy back to an earlier version, as a new version: the entries that
 * differ between the copy's base (the head it was reconciled from) and the version,
 * as the database finds them, are written into the directory and committed, in one
 * fenced commit, as a version whose origin is the restore. Only what differs leaves the
 * database, is written or committed: a restore of one file in a tree of ten thousand
 * touches one file. Nothing after the restored
 * version is lost: those versions stay listed, and restoring one of them undoes this.
 *
 * @module
 */

import {
  type ManifestFile,
  type VersionCounts,
  type VersionOrigin,
  versionChanges,
} from '../../store/index.js';
import type { BaseSnapshot } from './base-snapshot.js';
import { commitChanges } from './commit.js';
import {
  downloadFiles,
  fixMetadata,
  type MaterializeTarget,
  removeEntries,
} from './materialize.js';
import type { LocalChange } from './merge.js';

/** What a restore changes, from {@link planRestore}. */
export interface RestorePlan {
  /** Entries whose content the copy lacks: downloaded. */
  download: ManifestFile[];
  /** Entries whose content the copy has, with another mode or mtime: set in place. */
  metadata: ManifestFile[];
  /** Paths the version does not have: removed. */
  remove: string[];
}

/**
 * Sorts the changes that make the copy's base a version (`versionChanges`) into what the
 * copy needs: content it lacks, metadata to set, paths to remove. Pure.
 */
export function planRestore(
  base: ReadonlyMap<string, ManifestFile>,
  changes: { upserts: readonly ManifestFile[]; deletes: readonly string[] },
): RestorePlan {
  const plan: RestorePlan = { download: [], metadata: [], remove: [...changes.deletes] };
  for (const entry of changes.upserts) {
    if (base.get(entry.path)?.hash === entry.hash) plan.metadata.push(entry);
    else plan.download.push(entry);
  }
  return plan;
}

/** What {@link restoreCopy} did. */
export interface RestoreResult extends VersionCounts {
  /** The version the workspace is at now: the new one, or the head when nothing differed. */
  version: number;
  /** False when another writer had moved the head: the copy no longer matches it. */
  dirMatchesVersion: boolean;
}

/**
 * Makes the held copy (matching `base`, the head) equal to version `origin.restoredFrom`
 * and commits that as a new version made by `origin`, under `generation`. On success
 * `base` is updated in place to the new version. Call under the run's lock, on the
 * workspace's holder; a failure may leave the copy partly restored, so the caller
 * reconciles it in full.
 */
export async function restoreCopy(
  db: Parameters<typeof commitChanges>[0],
  target: MaterializeTarget & { nodeId: string; generation: number; base: BaseSnapshot },
  origin: VersionOrigin & { restoredFrom: number },
): Promise<RestoreResult> {
  const { base } = target;
  const plan = planRestore(
    base.files,
    await versionChanges(db, target.runId, base.version, origin.restoredFrom),
  );
  const write = (entry: ManifestFile): LocalChange => ({
    path: entry.path,
    entry,
    base: base.files.get(entry.path) ?? null,
  });
  const changes: LocalChange[] = [
    ...plan.download.map(write),
    ...plan.metadata.map(write),
    ...plan.remove.map((path) => ({ path, entry: null, base: base.files.get(path) ?? null })),
  ];
  if (changes.length === 0) {
    return { version: base.version, added: 0, changed: 0, removed: 0, dirMatchesVersion: true };
  }
  // Removals first: a file of the copy may stand where the version has a directory.
  await removeEntries(target.dir, plan.remove);
  await fixMetadata(target, plan.metadata);
  await downloadFiles(target, plan.download);
  const commit = await commitChanges(db, {
    runId: target.runId,
    nodeId: target.nodeId,
    generation: target.generation,
    baseVersion: base.version,
    changes,
    origin,
  });
  const added = plan.download.filter((e) => !base.files.has(e.path)).length;
  const counts = {
    added,
    changed: plan.download.length + plan.metadata.length - added,
    removed: plan.remove.length,
  };
  if (commit.headMoved) return { version: commit.version, ...counts, dirMatchesVersion: false };
  for (const entry of commit.plan.upserts) base.files.set(entry.path, entry);
  for (const path of commit.plan.deletes) base.files.delete(path);
  base.version = commit.version;
  base.updatedByNode = target.nodeId;
  return { version: commit.version, ...counts, dirMatchesVersion: true };
}
