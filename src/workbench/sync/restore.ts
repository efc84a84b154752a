/**
 * Putting a held copy back to an earlier version, as a new version: the entries that
 * differ between the copy's base (the head it was reconciled from) and the version are
 * written into the directory and committed, in one fenced commit, as a version whose
 * origin is the restore. Only what differs is read, written or committed: a restore of
 * one file in a tree of ten thousand touches one file. Nothing after the restored
 * version is lost: those versions stay listed, and restoring one of them undoes this.
 *
 * @module
 */

import type { ManifestFile, VersionCounts, VersionOrigin } from '../../store/index.js';
import { commitChanges } from './commit.js';
import {
  downloadFiles,
  fixMetadata,
  type MaterializeTarget,
  removeEntries,
} from './materialize.js';
import type { LocalChange } from './merge.js';
import type { BaseSnapshot } from './workspace-sync.js';

/** What a restore changes, from {@link planRestore}. */
export interface RestorePlan {
  /** Entries whose content the copy lacks: downloaded. */
  download: ManifestFile[];
  /** Entries whose content the copy has, with another mode or mtime: set in place. */
  metadata: ManifestFile[];
  /** Paths the version does not have: removed. */
  remove: string[];
}

/** Whether two entries are the same file, content, mode, time and blob. */
function sameEntry(a: ManifestFile, b: ManifestFile): boolean {
  return (
    a.hash === b.hash &&
    a.size === b.size &&
    a.mode === b.mode &&
    a.mtimeMs === b.mtimeMs &&
    a.blobRunId === b.blobRunId
  );
}

/** Compares the copy's base with the version to restore. Pure. */
export function planRestore(
  base: ReadonlyMap<string, ManifestFile>,
  version: readonly ManifestFile[],
): RestorePlan {
  const plan: RestorePlan = { download: [], metadata: [], remove: [] };
  const wanted = new Set<string>();
  for (const entry of version) {
    wanted.add(entry.path);
    const now = base.get(entry.path);
    if (now === undefined || now.hash !== entry.hash) plan.download.push(entry);
    else if (!sameEntry(now, entry)) plan.metadata.push(entry);
  }
  for (const path of base.keys()) if (!wanted.has(path)) plan.remove.push(path);
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
 * Makes the held copy (matching `base`) equal to `version`'s entries and commits that
 * as a version made by `origin`, under `generation`. On success `base` is updated in
 * place to the new version. Call under the run's lock, on the workspace's holder; a
 * failure may leave the copy partly restored, so the caller reconciles it in full.
 */
export async function restoreCopy(
  db: Parameters<typeof commitChanges>[0],
  target: MaterializeTarget & { nodeId: string; generation: number; base: BaseSnapshot },
  version: readonly ManifestFile[],
  origin: VersionOrigin,
): Promise<RestoreResult> {
  const { base } = target;
  const plan = planRestore(base.files, version);
  const changes: LocalChange[] = [
    ...plan.download.map((entry) => ({
      path: entry.path,
      entry,
      base: base.files.get(entry.path) ?? null,
    })),
    ...plan.metadata.map((entry) => ({
      path: entry.path,
      entry,
      base: base.files.get(entry.path) ?? null,
    })),
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
  const counts = {
    added: plan.download.filter((e) => !base.files.has(e.path)).length,
    changed: changes.length - plan.remove.length,
    removed: plan.remove.length,
  };
  counts.changed -= counts.added;
  if (commit.headMoved) return { version: commit.version, ...counts, dirMatchesVersion: false };
  for (const entry of commit.plan.upserts) base.files.set(entry.path, entry);
  for (const path of commit.plan.deletes) base.files.delete(path);
  base.version = commit.version;
  base.updatedByNode = target.nodeId;
  return { version: commit.version, ...counts, dirMatchesVersion: true };
}
