/**
 * The caller's worker hosts as the API shows them: every worker the store says they
 * have connected, merged with what is connected to this agent node now (the
 * {@link WorkerDirectory}) and with their standing consent.
 *
 * @module
 */

import type { WorkersAnswer, WorkerView } from '../contract/index.js';
import type { LiveWorker } from '../mesh/index.js';
import {
  listWorkerHosts,
  type Queryable,
  readConsentState,
  type WorkerHostRecord,
} from '../store/index.js';

export type { LiveWorker };

/** Worker hosts connected to this agent node now. */
export interface WorkerDirectory {
  connected(userId: string): LiveWorker[];
  /**
   * Whether a worker connected to another agent replica serves calls that arrive here
   * (its link is live and this node forwards to that replica). Absent: none does.
   */
  reachable?(host: WorkerHostRecord): boolean;
}

/**
 * The caller's workers, by id. Without a directory (an agent node that serves no
 * worker hosts) nothing is connected here, so every worker reads `connected: false`,
 * whatever its stored row says. With one, a worker connected to another agent replica
 * reads connected when the directory says calls reach it from here (its link is live
 * on that replica's word, and this node forwards to it).
 */
export async function callerWorkers(
  q: Queryable,
  directory: WorkerDirectory | undefined,
  userId: string,
): Promise<WorkersAnswer> {
  const [hosts, consent] = await Promise.all([
    listWorkerHosts(q, userId),
    readConsentState(q, userId),
  ]);
  const live = new Map((directory?.connected(userId) ?? []).map((w) => [w.workerId, w]));
  const views = new Map<string, WorkerView>();
  const held = (workerId: string) => ({
    scope: consent.workers.get(workerId)?.scope ?? 'none',
    killSwitch: consent.workers.get(workerId)?.killSwitch ?? false,
  });
  for (const host of hosts) {
    views.set(host.workerId, {
      workerId: host.workerId,
      connected: directory?.reachable?.(host) ?? false,
      os: host.os,
      provides: host.provides,
      version: host.version,
      connectedAt: host.connectedAt.toISOString(),
      disconnectedAt: host.disconnectedAt === null ? null : host.disconnectedAt.toISOString(),
      inFlight: 0,
      capacity: null,
      ...held(host.workerId),
    });
  }
  // What is live wins over the stored row: it is this node's first-hand view.
  for (const w of live.values()) {
    views.set(w.workerId, {
      workerId: w.workerId,
      connected: true,
      os: w.os,
      provides: [...w.provides],
      version: w.version,
      connectedAt: w.connectedAt.toISOString(),
      disconnectedAt: null,
      inFlight: w.inFlight,
      capacity: w.capacity,
      ...held(w.workerId),
    });
  }
  return {
    killSwitch: consent.allKilled,
    workers: [...views.values()].sort((a, b) => a.workerId.localeCompare(b.workerId)),
  };
}

/** Whether `workerId` is one of the user's workers: stored, or connected here now. */
export async function isCallerWorker(
  q: Queryable,
  directory: WorkerDirectory | undefined,
  userId: string,
  workerId: string,
): Promise<boolean> {
  if (directory?.connected(userId).some((w) => w.workerId === workerId)) return true;
  return (await listWorkerHosts(q, userId)).some((h) => h.workerId === workerId);
}
