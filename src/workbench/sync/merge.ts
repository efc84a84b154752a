/**
 * The three-way merge of a sync, as a function of data. A node's copy was reconciled
 * from a base version of the manifest; its command (or file action) then changed some
 * paths. Only those changes are committed, onto the manifest as it stands at commit
 * time (the head), so a node never turns another node's commit into a deletion.
 *
 * Per changed path, with `base` the entry the copy started from and `head` the entry
 * now (and the version that wrote it):
 * - nobody else touched it since the base (`head` is the base entry): apply;
 * - somebody did, and both sides agree (same content, or both deleted): apply, no
 *   conflict;
 * - somebody did, differently: a conflict. The holder of the workspace (the live row's
 *   node at its generation) wins and the head entry it replaces is recorded; a fenced
 *   writer (an older generation: a node that was taken over or has handed off) loses
 *   and its own change is recorded. Unrelated paths are never touched.
 *
 * @module
 */

import type { ManifestFile, VersionedFile } from '../../store/index.js';

/** One path the committer changed relative to its base. */
export interface LocalChange {
  path: string;
  /** The committer's entry; null when it deleted the file. */
  entry: ManifestFile | null;
  /** The base entry; null when the file is new to the committer. */
  base: ManifestFile | null;
}

/** One side that lost a conflict. */
export interface MergeConflict {
  path: string;
  /** `committer`: the committer's change lost; `head`: the head entry it replaced lost. */
  side: 'committer' | 'head';
  /** The losing entry; null when the losing side had deleted the file. */
  lost: ManifestFile | null;
}

/** What to commit. */
export interface MergePlan {
  upserts: ManifestFile[];
  deletes: string[];
  conflicts: MergeConflict[];
  /** Changes dropped because a newer holder's entry won. */
  skipped: number;
}

function headChangedSinceBase(
  change: LocalChange,
  head: VersionedFile | undefined,
  baseVersion: number,
): boolean {
  if (head !== undefined) return head.version > baseVersion;
  // No head entry: somebody deleted it, unless the base never had it either.
  return change.base !== null;
}

function agree(change: LocalChange, head: VersionedFile | undefined): boolean {
  if (change.entry === null) return head === undefined;
  return head !== undefined && head.hash === change.entry.hash;
}

function strip(head: VersionedFile): ManifestFile {
  return {
    path: head.path,
    hash: head.hash,
    size: head.size,
    mode: head.mode,
    mtimeMs: head.mtimeMs,
  };
}

/**
 * Merges `changes` (made from `baseVersion`) onto the head entries of their paths.
 * `committerHolds`: the committer is the workspace's holder at its generation.
 */
export function planMerge(
  changes: readonly LocalChange[],
  head: ReadonlyMap<string, VersionedFile>,
  baseVersion: number,
  committerHolds: boolean,
): MergePlan {
  const plan: MergePlan = { upserts: [], deletes: [], conflicts: [], skipped: 0 };
  const apply = (c: LocalChange) => {
    if (c.entry === null) plan.deletes.push(c.path);
    else plan.upserts.push(c.entry);
  };
  for (const change of changes) {
    const current = head.get(change.path);
    if (!headChangedSinceBase(change, current, baseVersion) || agree(change, current)) {
      apply(change);
      continue;
    }
    if (committerHolds) {
      apply(change);
      plan.conflicts.push({
        path: change.path,
        side: 'head',
        lost: current === undefined ? null : strip(current),
      });
    } else {
      plan.skipped += 1;
      plan.conflicts.push({ path: change.path, side: 'committer', lost: change.entry });
    }
  }
  return plan;
}

/** The plan when nobody committed since the base: every change applies. */
export function applyAll(changes: readonly LocalChange[]): MergePlan {
  const plan: MergePlan = { upserts: [], deletes: [], conflicts: [], skipped: 0 };
  for (const c of changes) {
    if (c.entry === null) plan.deletes.push(c.path);
    else plan.upserts.push(c.entry);
  }
  return plan;
}
