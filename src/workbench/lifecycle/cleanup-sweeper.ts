import { readdir } from 'node:fs/promises';
import { checkRunId } from '../../contract/index.js';
import type { ObjectStore } from '../../objects/index.js';
import {
  type Db,
  getRun,
  insertAuditEvent,
  isTerminalRunStatus,
  listLiveWorkspacesForNode,
  listLiveWorkspacesOfEndedRuns,
  listRunsAwaitingCleanup,
  releaseWorkspace,
} from '../../store/index.js';
import type { Logger } from '../../telemetry/logger.js';
import { sweepUploads } from '../actions/index.js';
import { deleteRunData, releaseReasonFor, removeWorkspaceDir } from './run-lifecycle.js';

/** What one sweep needs. */
export interface SweeperDeps {
  db: Db;
  objects: ObjectStore;
  nodeId: string;
  workbenchRoot: string;
  log: Logger;
  /** Evicts warm copies idle past their TTL; returns the run ids evicted. */
  evictIdle?: (now: Date) => Promise<string[]>;
  /**
   * Run ids whose directories the warm cache tracks. They are the cache's to evict
   * (it forgets what it knew of them as it does), never the sweep's.
   */
  tracked?: () => string[];
  /** Removes what killed sandbox runs left on this host (empty per-command cgroups); returns how many. */
  sweepSandbox?: () => Promise<number>;
}

/** What one sweep removed. */
export interface SweepReport {
  /** Live workspaces of runs that had already ended, now released. */
  released: number;
  /** Deleted or retention-expired runs whose data was removed. */
  runsCleaned: number;
  /** Local directories that no live row on this node claimed, removed. */
  directoriesRemoved: number;
  /** Such directories whose removal failed (logged; the next sweep tries again). */
  directoriesFailed: number;
  /** Warm copies evicted for idleness. */
  warmEvicted: number;
  /** Stages of uploads left idle (never completed), removed. */
  uploadsRemoved: number;
}

async function releaseMissed(deps: SweeperDeps): Promise<number> {
  let released = 0;
  for (const ws of await listLiveWorkspacesOfEndedRuns(deps.db)) {
    const run = await getRun(deps.db, ws.runId);
    const reason =
      run && isTerminalRunStatus(run.status) ? releaseReasonFor(run.status) : 'orphaned';
    if (await releaseWorkspace(deps.db, ws.id, reason)) {
      await insertAuditEvent(deps.db, {
        eventType: 'workspace.released',
        runId: ws.runId,
        workspaceId: ws.id,
        ownerUserId: ws.ownerUserId,
        metadata: { reason, nodeId: ws.nodeId, bySweeper: true },
      });
      released += 1;
    }
  }
  return released;
}

async function removeUnclaimedDirs(
  deps: SweeperDeps,
): Promise<{ removed: number; failed: number }> {
  // Directory names first, rows second: a workspace row is committed before its
  // directory is made, so any directory seen here already has its row if it is live.
  // Directories the warm cache tracks are left to it.
  let names: string[];
  try {
    names = await readdir(deps.workbenchRoot);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { removed: 0, failed: 0 };
    throw err;
  }
  const live = new Set((await listLiveWorkspacesForNode(deps.db, deps.nodeId)).map((w) => w.runId));
  for (const runId of deps.tracked?.() ?? []) live.add(runId);
  let removed = 0;
  let failed = 0;
  for (const name of names) {
    if (live.has(name) || checkRunId(name) !== null) continue;
    // One directory that cannot be removed does not keep the sweep from the others.
    try {
      await removeWorkspaceDir(deps.workbenchRoot, name);
      removed += 1;
    } catch (err) {
      failed += 1;
      deps.log.warn({ err, runId: name }, 'unclaimed workspace directory could not be removed');
    }
  }
  return { removed, failed };
}

/**
 * One pass of the periodic cleanup: releases live workspaces of runs that already
 * ended (a release that was interrupted), finishes the deletion of deleted or expired
 * runs, removes local directories no live row on this node claims, evicts idle
 * warm copies, removes what killed sandbox runs left on this host and the stages of
 * uploads left idle. Each step is idempotent, so a crashed sweep is simply run again.
 */
export async function sweepOnce(deps: SweeperDeps, now: Date): Promise<SweepReport> {
  const released = await releaseMissed(deps);
  let runsCleaned = 0;
  for (const run of await listRunsAwaitingCleanup(deps.db, now)) {
    await deleteRunData(deps, run.id);
    runsCleaned += 1;
  }
  const dirs = await removeUnclaimedDirs(deps);
  const directoriesRemoved = dirs.removed;
  const warmEvicted = deps.evictIdle ? (await deps.evictIdle(now)).length : 0;
  const sandboxLeftovers = (await deps.sweepSandbox?.()) ?? 0;
  const uploadsRemoved = await sweepUploads(deps.workbenchRoot, now.getTime());
  const report = {
    released,
    runsCleaned,
    directoriesRemoved,
    directoriesFailed: dirs.failed,
    warmEvicted,
    uploadsRemoved,
  };
  // The operator's temp cleanup count, under the same event type the queue uses.
  deps.log.info(
    {
      event: 'workspace_command.temp_cleanup',
      removed: directoriesRemoved + warmEvicted,
      failed: dirs.failed,
      ...report,
      sandboxLeftovers,
    },
    'workspace_command.temp_cleanup',
  );
  return report;
}

/** Runs {@link sweepOnce} every `intervalMs` until the returned stop function is called. */
export function startSweeper(deps: SweeperDeps, intervalMs: number): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = sweepOnce(deps, new Date()).catch((err: unknown) => {
      deps.log.error({ err }, 'cleanup sweep failed');
    });
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
