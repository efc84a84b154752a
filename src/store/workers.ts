import type { Queryable } from './db.js';
import { date, dateOrNull } from './rows.js';

/**
 * A worker's lifecycle: `serving` (claims commands, holds workspaces), `draining`
 * (finishes what it runs and hands its workspaces off, claims nothing new), then
 * `stopped`. A worker whose heartbeat is older than the liveness window counts as
 * gone whatever its status says.
 */
export type WorkerStatus = 'serving' | 'draining' | 'stopped';

/** One command queue of a node process, as the other nodes see it. */
export interface Worker {
  /** The lease owner the worker claims as, `<nodeId>/<random>`: unique per process start. */
  leaseOwner: string;
  nodeId: string;
  status: WorkerStatus;
  startedAt: Date;
  heartbeatAt: Date;
  stoppedAt: Date | null;
}

/**
 * What other nodes conclude about a node from its workers: `serving` when a live
 * worker serves, `draining` when its live workers all drain, `gone` when none is live.
 */
export type NodeLiveness = 'serving' | 'draining' | 'gone';

/**
 * The SQL condition "worker `alias` is live", with the liveness window (ms) as
 * parameter `$n`. Written once so every query agrees on what live means.
 */
export function liveWorkerCondition(alias: string, param: number): string {
  return `(${alias}.status <> 'stopped' and ${alias}.heartbeat_at > now() - ($${param} * interval '1 millisecond'))`;
}

function toWorker(r: Record<string, unknown>): Worker {
  return {
    leaseOwner: String(r.lease_owner),
    nodeId: String(r.node_id),
    status: r.status as WorkerStatus,
    startedAt: date(r.started_at),
    heartbeatAt: date(r.heartbeat_at),
    stoppedAt: dateOrNull(r.stopped_at),
  };
}

/**
 * Records a worker, heartbeat now, as `serving` unless another status is given.
 * Registering again revives the row.
 */
export async function registerWorker(
  q: Queryable,
  w: { leaseOwner: string; nodeId: string; status?: Exclude<WorkerStatus, 'stopped'> },
): Promise<void> {
  await q.execute(
    `insert into workbench_worker (lease_owner, node_id, status) values ($1, $2, $3)
     on conflict (lease_owner) do update set status = excluded.status, heartbeat_at = now(),
       stopped_at = null`,
    [w.leaseOwner, w.nodeId, w.status ?? 'serving'],
  );
}

/**
 * Renews a worker's heartbeat. A worker marked `stopped` stays stopped; returns false
 * then (or when the row is gone), so the worker knows it is no longer counted live.
 */
export async function heartbeatWorker(q: Queryable, leaseOwner: string): Promise<boolean> {
  const n = await q.execute(
    `update workbench_worker set heartbeat_at = now()
     where lease_owner = $1 and status <> 'stopped'`,
    [leaseOwner],
  );
  return n > 0;
}

/** Moves a worker to `status` (and renews its heartbeat unless it stops). */
export async function setWorkerStatus(
  q: Queryable,
  leaseOwner: string,
  status: WorkerStatus,
): Promise<void> {
  await q.execute(
    `update workbench_worker set status = $2,
       heartbeat_at = case when $2 = 'stopped' then heartbeat_at else now() end,
       stopped_at = case when $2 = 'stopped' then now() else null end
     where lease_owner = $1`,
    [leaseOwner, status],
  );
}

/** Reads one worker. */
export async function getWorker(q: Queryable, leaseOwner: string): Promise<Worker | null> {
  const rows = await q.query(
    `select lease_owner, node_id, status, started_at, heartbeat_at, stopped_at
     from workbench_worker where lease_owner = $1`,
    [leaseOwner],
  );
  return rows[0] ? toWorker(rows[0]) : null;
}

/** Whether `nodeId` has a live worker, and whether it serves or drains. */
export async function nodeLiveness(
  q: Queryable,
  nodeId: string,
  livenessMs: number,
): Promise<NodeLiveness> {
  const rows = await q.query<{ serving: boolean; draining: boolean }>(
    `select bool_or(k.status = 'serving') as serving, bool_or(k.status = 'draining') as draining
     from workbench_worker k where k.node_id = $1 and ${liveWorkerCondition('k', 2)}`,
    [nodeId, livenessMs],
  );
  const r = rows[0];
  if (r?.serving === true) return 'serving';
  if (r?.draining === true) return 'draining';
  return 'gone';
}

/** Removes stopped or long-silent worker rows older than `olderThanMs`; returns how many. */
export async function pruneWorkers(q: Queryable, olderThanMs: number): Promise<number> {
  return q.execute(
    `delete from workbench_worker
     where heartbeat_at < now() - ($1 * interval '1 millisecond')
       and not exists (select 1 from workspace_command c
                       where c.lease_owner = workbench_worker.lease_owner)`,
    [olderThanMs],
  );
}
