/**
 * What a workbench node lets go of when a run ends or is deleted: the run's warm
 * sandbox (its processes), its warm copy, its upload stages and its network (proxy
 * endpoint and package caches). Called by whoever ended
 * the run, before the end or delete call answers: in process on a node that holds its
 * workbench itself, over the mesh (`workbench.release_run`) on every replica an agent
 * node reaches. A node it does not reach lets go in its cleanup sweep (runs it no
 * longer holds), and an idle warm sandbox ends after `MEMQL_SANDBOX_IDLE_MS` anyway.
 *
 * Nothing is let go of a run that is still running: the request is only a hint, and
 * the run's row decides.
 *
 * @module
 */

import { checkRunId, isTerminalRunStatus } from '../contract/index.js';
import type { RunnerSelection } from '../sandbox/index.js';
import { type Db, getLiveWorkspace, getRun } from '../store/index.js';
import type { Logger } from '../telemetry/index.js';
import { removeRunStages } from './actions/index.js';
import type { WorkbenchEgress } from './egress/index.js';
import type { RunLocks } from './lifecycle/index.js';
import type { WarmCache } from './sync/index.js';

/** What {@link releaseRun} and {@link evictUnheld} act on. */
export interface RunReleaseDeps {
  db: Db;
  nodeId: string;
  workbenchRoot: string;
  warm: WarmCache;
  locks: RunLocks;
  runner: RunnerSelection;
  /** The node's egress: a run let go of closes its proxy endpoint and drops its caches. */
  egress?: WorkbenchEgress;
  log: Logger;
}

/** What {@link releaseRun} did. */
export interface RunRelease {
  /** False when the run is still running (nothing was touched) or the id is no run id. */
  released: boolean;
  /**
   * True when an operation of the run (a command) was still under way here: its
   * sandbox and copy go as soon as it ends, not before the answer.
   */
  afterRunning: boolean;
}

/**
 * Lets go of everything this node keeps of an ended or deleted run. The run's idle
 * warm sandbox is ended and waited for (no process of it is left when this resolves),
 * its upload stages are removed, and its warm copy is evicted under the run's lock:
 * at once when nothing of the run runs here, else right after what runs.
 */
export async function releaseRun(deps: RunReleaseDeps, runId: string): Promise<RunRelease> {
  if (checkRunId(runId) !== null) return { released: false, afterRunning: false };
  // Null for a deleted run as for an absent one: both are over.
  const run = await getRun(deps.db, runId);
  if (run !== null && !isTerminalRunStatus(run.status)) {
    return { released: false, afterRunning: false };
  }
  const dir = deps.warm.dirOf(runId);
  if ('runner' in deps.runner) await deps.runner.runner.release?.(dir);
  await removeRunStages(deps.workbenchRoot, runId);
  await deps.egress?.releaseRun(runId);
  const afterRunning = deps.locks.busy(runId);
  // The eviction ends the sandbox a running command gives back when it ends.
  const evicted = deps.locks.run(runId, () => deps.warm.evict(runId));
  if (afterRunning) {
    evicted.catch((err: unknown) =>
      deps.log.warn({ err, runId }, 'the warm copy of an ended run could not be removed'),
    );
  } else {
    await evicted;
  }
  deps.log.info(
    { runId, afterRunning },
    'ended run let go: warm sandbox, copy, upload stages and network',
  );
  return { released: true, afterRunning };
}

/**
 * The sweep's backstop: evicts warm copies of runs this node no longer holds (their
 * end, deletion or takeover did not reach it), each under its run's lock and only
 * once the run's live row, read again there, names another node or none. Returns the
 * run ids evicted.
 */
export async function evictUnheld(
  deps: RunReleaseDeps,
  held: ReadonlySet<string>,
): Promise<string[]> {
  const evicted: string[] = [];
  for (const runId of deps.warm.tracked()) {
    // A run something works on is left to the next sweep rather than waited for.
    if (held.has(runId) || deps.locks.busy(runId)) continue;
    const gone = await deps.locks.run(runId, async () => {
      const live = await getLiveWorkspace(deps.db, runId);
      if (live?.nodeId === deps.nodeId) return false;
      await deps.warm.evict(runId);
      await deps.egress?.releaseRun(runId);
      return true;
    });
    if (gone) evicted.push(runId);
  }
  return evicted;
}
