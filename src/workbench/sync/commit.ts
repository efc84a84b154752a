/**
 * The fenced commit of a sync: one transaction that checks who holds the workspace,
 * locks the manifest head, merges this copy's changes onto it (see `merge.ts`),
 * writes the result and records any conflict. The holder's row is read `for share`,
 * so a takeover or handoff waits until a commit that passed the fence has ended, and
 * the successor then reconciles from a manifest that includes it.
 *
 * @module
 */

import { WorkbenchError } from '../../contract/index.js';
import {
  applyManifestChange,
  clearBlobUploads,
  type Db,
  getManifestEntries,
  getWorkspaceHolder,
  insertAuditEvent,
  insertFileConflicts,
  lockKeptVersion,
  lockManifest,
  type VersionedFile,
  type VersionOrigin,
} from '../../store/index.js';
import { applyAll, type LocalChange, type MergePlan, planMerge } from './merge.js';

/** A copy's changes, and where the copy came from. */
export interface CommitRequest {
  runId: string;
  /** The committing node. */
  nodeId: string;
  /** The generation this node held the workspace at when its copy was reconciled. */
  generation: number;
  /** The manifest version the copy was reconciled from. */
  baseVersion: number;
  changes: readonly LocalChange[];
  /** What makes the version (recorded with it). */
  origin?: VersionOrigin;
  /** Hashes of the blobs this change put (their upload records go with the commit). */
  uploaded?: readonly string[];
}

/** What a commit did. */
export interface CommitOutcome {
  /** The manifest version after the commit (the head's, when nothing was written). */
  version: number;
  /** True when others had committed since the base: the copy lacks their changes. */
  headMoved: boolean;
  /** False when this node no longer held the workspace at its generation (fenced). */
  holder: boolean;
  plan: MergePlan;
}

/**
 * The run's workspace has no live holder (the run ended or was deleted since the copy
 * was reconciled): nothing is committed.
 */
export function workspaceReleasedError(runId: string): WorkbenchError {
  return new WorkbenchError(
    'run_ended',
    `run_ended: the workspace of run "${runId}" was released while this change was made, so the change was not kept; start a new run`,
    { runId },
  );
}

/** Commits `req` in one transaction; throws `run_ended` when no workspace is live. */
export async function commitChanges(db: Db, req: CommitRequest): Promise<CommitOutcome> {
  return db.transaction(async (tx) => {
    // A takeover that commits while this statement waits for the row's lock shows the
    // old row released and hides its successor (the snapshot predates it): a second
    // statement, with a fresh snapshot, sees the successor.
    const holder =
      (await getWorkspaceHolder(tx, req.runId, { lock: true })) ??
      (await getWorkspaceHolder(tx, req.runId, { lock: true }));
    if (holder === null) throw workspaceReleasedError(req.runId);
    const holds = holder.nodeId === req.nodeId && holder.generation === req.generation;
    if (req.origin?.restoredFrom !== undefined) {
      // The restored version stays until this commits: retention waits, then sees it.
      if (!(await lockKeptVersion(tx, req.runId, req.origin.restoredFrom))) {
        throw new WorkbenchError(
          'version_not_found',
          `version_not_found: run "${req.runId}" no longer keeps version ${req.origin.restoredFrom}; version_list names the versions it keeps`,
          { runId: req.runId, version: req.origin.restoredFrom },
        );
      }
    }
    const head = await lockManifest(tx, req.runId);
    const headMoved = head.version !== req.baseVersion;
    const entries: ReadonlyMap<string, VersionedFile> = headMoved
      ? await getManifestEntries(
          tx,
          req.runId,
          req.changes.map((c) => c.path),
        )
      : new Map();
    // With an unmoved head every change applies: nobody touched any path since the base.
    const plan = headMoved
      ? planMerge(req.changes, entries, req.baseVersion, holds)
      : applyAll(req.changes);
    if (plan.upserts.length === 0 && plan.deletes.length === 0 && plan.conflicts.length === 0) {
      return { version: head.version, headMoved, holder: holds, plan };
    }
    const version = head.version + 1;
    await clearBlobUploads(tx, req.runId, req.uploaded ?? []);
    await applyManifestChange(tx, {
      runId: req.runId,
      nodeId: req.nodeId,
      version,
      upserts: plan.upserts,
      deletes: plan.deletes,
      generation: req.generation,
      ...(req.origin ? { origin: req.origin } : {}),
    });
    if (plan.conflicts.length > 0) {
      await insertFileConflicts(
        tx,
        plan.conflicts.map((c) => ({
          runId: req.runId,
          path: c.path,
          hash: c.lost?.hash ?? null,
          size: c.lost?.size ?? null,
          mode: c.lost?.mode ?? null,
          mtimeMs: c.lost?.mtimeMs ?? null,
          blobRunId: c.lost?.blobRunId ?? null,
          committerNodeId: req.nodeId,
          committerGeneration: req.generation,
          side: c.side,
          baseVersion: req.baseVersion,
          committedVersion: version,
        })),
      );
      // Counts only: paths and contents never go into audit events.
      await insertAuditEvent(tx, {
        eventType: 'workspace.sync_conflict',
        runId: req.runId,
        workspaceId: holder.workspaceId,
        ownerUserId: holder.ownerUserId,
        metadata: {
          nodeId: req.nodeId,
          generation: req.generation,
          holderGeneration: holder.generation,
          conflicts: plan.conflicts.length,
          committerLost: plan.conflicts.filter((c) => c.side === 'committer').length,
          baseVersion: req.baseVersion,
          version,
        },
      });
    }
    return { version, headMoved, holder: holds, plan };
  });
}
