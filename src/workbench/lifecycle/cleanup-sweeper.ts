import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { checkRunId } from '../../contract/index.js';
import type { ObjectStore } from '../../objects/index.js';
import { sweepRetention } from '../../queue/index.js';
import {
  type Db,
  expireBlobUploads,
  getRun,
  insertAuditEvent,
  isTerminalRunStatus,
  listLiveWorkspacesForNode,
  listLiveWorkspacesOfEndedRuns,
  listRunsAwaitingCleanup,
  listRunsHeldByNode,
  pruneVersions,
  type RowRetention,
  releaseWorkspace,
  runsWithExpiredVersions,
  type VersionRetention,
} from '../../store/index.js';
import type { Logger } from '../../telemetry/index.js';
import { sweepUploads, UPLOAD_IDLE_MS } from '../actions/index.js';
import { collectBlobs } from '../sync/index.js';
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
  /**
   * Evicts warm copies (and their warm sandboxes) of runs whose workspace this node no
   * longer holds, given the runs it holds; returns the run ids evicted. The backstop of
   * a run's end or deletion that did not reach this node.
   */
  evictUnheld?: (held: ReadonlySet<string>) => Promise<string[]>;
  /** Removes what killed sandbox runs left on this host (empty per-command cgroups); returns how many. */
  sweepSandbox?: () => Promise<number>;
  /** `MEMQL_UPLOAD_IDLE_MS`: how long an upload's stage lives with no new part. Default one hour. */
  uploadIdleMs?: number;
  /**
   * `MEMQL_VERSION_KEEP_COUNT` and `MEMQL_VERSION_KEEP_MS`: how long versions are kept;
   * absent, they are kept while their run is.
   */
  versionRetention?: VersionRetention;
  /**
   * `MEMQL_COMMAND_KEEP_MS` and `MEMQL_AUDIT_KEEP_MS`: how long finished commands and
   * audit events are kept; absent, they are kept while their run is.
   */
  rowRetention?: RowRetention;
}

/** What one sweep removed. */
export interface SweepReport {
  /** Live workspaces of runs that had already ended, now released. */
  released: number;
  /** Deleted or retention-expired runs whose data was removed. */
  runsCleaned: number;
  /** Workspace directories of this node's that no live row on it claimed, removed. */
  directoriesRemoved: number;
  /** Such directories whose removal failed (logged; the next sweep tries again). */
  directoriesFailed: number;
  /**
   * Entries of the workbench root named like a run that the sweep left because nothing
   * shows this node made them: a file or a link, or a directory of a run this node never
   * held. An operator's to look at.
   */
  entriesKept: number;
  /** Warm copies evicted for idleness, or because this node no longer holds their run. */
  warmEvicted: number;
  /** Stages of uploads removed: idle past `MEMQL_UPLOAD_IDLE_MS`, or of runs not held here. */
  uploadsRemoved: number;
  /** Versions past retention removed, and the blobs only they needed, deleted. */
  versionsPruned: number;
  blobsCollected: number;
  /** Finished commands and audit events past retention, deleted. */
  commandsDeleted: number;
  auditEventsDeleted: number;
}

/** Runs whose versions one sweep prunes at most (the next sweep takes the rest). */
const PRUNE_RUNS_PER_SWEEP = 100;

/**
 * Removes versions past retention, run by run, and deletes the blobs only they needed.
 * Upload records whose sync never committed expire here too.
 */
async function pruneHistory(
  deps: SweeperDeps,
): Promise<{ versionsPruned: number; blobsCollected: number }> {
  await expireBlobUploads(deps.db);
  const retention = deps.versionRetention;
  if (retention === undefined) return { versionsPruned: 0, blobsCollected: 0 };
  let versionsPruned = 0;
  let blobsCollected = 0;
  for (const runId of await runsWithExpiredVersions(deps.db, retention, PRUNE_RUNS_PER_SWEEP)) {
    const pruned = await pruneVersions(deps.db, runId, retention);
    versionsPruned += pruned.versions;
    blobsCollected += (await collectBlobs(deps, pruned.blobs)).deleted;
  }
  return { versionsPruned, blobsCollected };
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

/**
 * Removes workspace directories of this node's that no live row on it claims. What
 * the sweep removes is only what it can show this node made: an entry of the
 * workbench root is removed when it is a directory (not a file, not a link), its name
 * is a run id, and this node has a workspace row of that run (live or not: the node
 * makes `<root>/<runId>` only for a run it holds, after the row is committed). Anything
 * else named like a run is left and counted.
 */
async function removeUnclaimedDirs(
  deps: SweeperDeps,
): Promise<{ removed: number; failed: number; kept: number; live: Set<string> }> {
  // Directory names first, rows second: a workspace row is committed before its
  // directory is made, so any directory seen here already has its row if it is live.
  // Directories the warm cache tracks are left to it.
  let names: string[];
  try {
    names = await readdir(deps.workbenchRoot);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    names = [];
  }
  const live = new Set((await listLiveWorkspacesForNode(deps.db, deps.nodeId)).map((w) => w.runId));
  const result = { removed: 0, failed: 0, kept: 0, live: new Set(live) };
  for (const runId of deps.tracked?.() ?? []) live.add(runId);
  const unclaimed = names.filter((name) => !live.has(name) && checkRunId(name) === null);
  if (unclaimed.length === 0) return result;
  const made = await listRunsHeldByNode(deps.db, deps.nodeId, unclaimed);
  for (const name of unclaimed) {
    const st = await lstat(join(deps.workbenchRoot, name)).catch(() => null);
    if (st === null) continue;
    if (!made.has(name) || !st.isDirectory()) {
      result.kept += 1;
      continue;
    }
    // One directory that cannot be removed does not keep the sweep from the others.
    try {
      await removeWorkspaceDir(deps.workbenchRoot, name);
      result.removed += 1;
    } catch (err) {
      result.failed += 1;
      deps.log.warn({ err, runId: name }, 'unclaimed workspace directory could not be removed');
    }
  }
  return result;
}

/**
 * One pass of the periodic cleanup: releases live workspaces of runs that already
 * ended (a release that was interrupted), finishes the deletion of deleted or expired
 * runs, removes this node's workspace directories no live row on it claims, evicts
 * warm copies that are idle or of runs no longer held here, removes what killed
 * sandbox runs left on this host, and the stages of uploads left idle or of runs not
 * held here; removes versions past retention with the blobs only they needed, and
 * finished commands and audit events past theirs (`queue/retention-sweep.ts`). Each
 * step is idempotent, so a crashed sweep is simply run again.
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
  const warmEvicted =
    (deps.evictIdle ? (await deps.evictIdle(now)).length : 0) +
    (deps.evictUnheld ? (await deps.evictUnheld(dirs.live)).length : 0);
  const sandboxLeftovers = (await deps.sweepSandbox?.()) ?? 0;
  const uploads = await sweepUploads(
    deps.workbenchRoot,
    now.getTime(),
    deps.uploadIdleMs ?? UPLOAD_IDLE_MS,
    async () =>
      new Set((await listLiveWorkspacesForNode(deps.db, deps.nodeId)).map((w) => w.runId)),
  );
  const history = await pruneHistory(deps);
  const rows = deps.rowRetention
    ? await sweepRetention(deps.db, deps.rowRetention)
    : { commandsDeleted: 0, auditEventsDeleted: 0 };
  const report = {
    released,
    runsCleaned,
    directoriesRemoved,
    directoriesFailed: dirs.failed,
    entriesKept: dirs.kept,
    warmEvicted,
    uploadsRemoved: uploads.removed,
    ...history,
    ...rows,
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
