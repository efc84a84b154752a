import { join } from 'node:path';
import {
  checkRunId,
  type DeletedCounts,
  isTerminalRunStatus,
  WorkbenchError,
} from '../../contract/index.js';
import { removeTree } from '../../files/index.js';
import type { ObjectStore } from '../../objects/index.js';
import {
  blobsNamedElsewhere,
  type Db,
  deleteManifest,
  deleteRunAuditEvents,
  deleteRunCommands,
  deleteRunProcesses,
  finishRun,
  foreignBlobsOf,
  insertAuditEvent,
  markRunArtifactsDeleted,
  markRunDeleted,
  markRunWorkspacesDeleted,
  type ReleasedReason,
  type Run,
  releaseLiveWorkspace,
  type TerminalRunStatus,
  type Workspace,
} from '../../store/index.js';
import type { Logger } from '../../telemetry/index.js';
import { removeRunStages } from '../actions/index.js';
import { blobsUnder, collectBlobs } from '../sync/index.js';

/** Where a run's workspace bytes live in the object store: everything under it is the run's. */
export function runObjectPrefix(runId: string): string {
  return `runs/${runId}/`;
}

/** The release reason for a run that ended with `status`. */
export function releaseReasonFor(status: TerminalRunStatus): ReleasedReason {
  return `run_${status}`;
}

/**
 * Removes a run's local workspace directory, if this node has one, whatever a command
 * left in it (FIFOs, links, trees deeper than PATH_MAX), never following a link out
 * of it (`files/remove-tree.ts`). Only a valid run id is ever joined to the root, so this
 * cannot remove anything else.
 */
export async function removeWorkspaceDir(workbenchRoot: string, runId: string): Promise<void> {
  if (checkRunId(runId) !== null) return;
  await removeTree(join(workbenchRoot, runId));
}

/** Removes what a run left in this node's workbench root: its directory and its upload stages. */
async function removeRunLeftovers(workbenchRoot: string, runId: string): Promise<void> {
  await removeWorkspaceDir(workbenchRoot, runId);
  await removeRunStages(workbenchRoot, runId);
}

/**
 * The run a call or command acts for, or its refusal: a run that does not exist (or
 * was deleted) gives its workspace no owner (`workspace_owner_unresolved`), and an
 * ended one has released its workspace (`run_ended`). Pure.
 */
export function requireLiveRun(runId: string, run: Run | null): Run {
  if (run === null) {
    throw new WorkbenchError(
      'workspace_owner_unresolved',
      `workspace_owner_unresolved: run "${runId}" does not exist, so its workspace has no owner; create the run first`,
      { runId },
    );
  }
  if (isTerminalRunStatus(run.status)) {
    throw new WorkbenchError(
      'run_ended',
      `run_ended: run "${run.id}" ended as "${run.status}" and its workspace is released; start a new run`,
      { runId: run.id, status: run.status },
    );
  }
  return run;
}

/** What ending a run did. */
export interface EndRunResult {
  run: Run;
  /** False when the run had already ended this way (an idempotent repeat). */
  changed: boolean;
  /** The workspace row released by this call, if there was a live one. */
  released: Workspace | null;
}

/**
 * Moves a run to a terminal status and releases its workspace in the same
 * transaction (all four terminal statuses, `abandoned` included). Idempotent; a run
 * that never had a workspace is a plain status change. The local directory and the
 * run's upload stages are removed when `workbenchRoot` is given; what nodes keep of it
 * beyond that (a warm sandbox, a copy elsewhere) is theirs to let go of, asked by the
 * caller (`WorkbenchHost.releaseRun`), or in their cleanup sweep, since no live row
 * claims it any more.
 */
export async function endRun(
  deps: { db: Db; log: Logger; workbenchRoot?: string },
  runId: string,
  status: TerminalRunStatus,
): Promise<EndRunResult> {
  const result = await deps.db.transaction(async (tx) => {
    const { run, changed } = await finishRun(tx, runId, status);
    const released = await releaseLiveWorkspace(tx, runId, releaseReasonFor(status));
    if (released) {
      await insertAuditEvent(tx, {
        eventType: 'workspace.released',
        runId,
        workspaceId: released.id,
        ownerUserId: released.ownerUserId,
        metadata: { reason: releaseReasonFor(status), nodeId: released.nodeId },
      });
    }
    return { run, changed, released };
  });
  if (deps.workbenchRoot) await removeRunLeftovers(deps.workbenchRoot, runId);
  if (result.released) {
    deps.log.info(
      { runId, workspaceId: result.released.id, reason: releaseReasonFor(status) },
      'workspace released',
    );
  }
  return result;
}

/**
 * Deletes everything a run left: workspace object bytes, the file manifest and its
 * history, command rows (with their call keys) and audit events, and promoted artifacts (records and bytes: deleting a run
 * withdraws what it published), then marks its workspaces deleted. The run is marked
 * deleted first so it stops resolving, nothing new is written meanwhile and no fork of
 * it can start; workspaces are marked last, so an interrupted deletion is found again
 * by the cleanup sweep and finished.
 *
 * Its blobs go, but for those its forks still name (they stay until nothing does), and
 * so do the blobs of other runs that only it still named (a fork's origin deleted
 * before it). A run no fork names has its whole prefix removed at once.
 */
export async function deleteRunData(
  deps: { db: Db; objects: ObjectStore; log: Logger; workbenchRoot?: string },
  runId: string,
): Promise<DeletedCounts> {
  await markRunDeleted(deps.db, runId);
  const artifacts = await markRunArtifactsDeleted(deps.db, runId);
  if (artifacts.length > 0) await deps.objects.deleteMany(artifacts.map((a) => a.objectKey));
  const foreign = await foreignBlobsOf(deps.db, runId);
  await deleteManifest(deps.db, runId);
  let objects: number;
  if (await blobsNamedElsewhere(deps.db, runId)) {
    objects = (await collectBlobs(deps, await blobsUnder(deps.objects, runId))).deleted;
  } else {
    objects = await deps.objects.deletePrefix(runObjectPrefix(runId));
  }
  if (foreign.length > 0) objects += (await collectBlobs(deps, foreign)).deleted;
  const commands = await deleteRunCommands(deps.db, runId);
  await deleteRunAuditEvents(deps.db, runId);
  await deleteRunProcesses(deps.db, runId);
  const workspaces = await markRunWorkspacesDeleted(deps.db, runId);
  if (deps.workbenchRoot) await removeRunLeftovers(deps.workbenchRoot, runId);
  const counts = { objects, commands, workspaces, artifacts: artifacts.length };
  deps.log.info({ runId, ...counts }, 'run data deleted');
  return counts;
}
