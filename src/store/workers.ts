import type { Queryable } from './db.js';
import { continuityBeatSql, type GoneEvidence, steadyDatabaseSql } from './db-continuity.js';
import { date, dateOrNull } from './rows.js';

/**
 * The gap between beats a heartbeat allows when its caller names none, ms: two
 * heartbeat intervals at the default liveness window (10 s, beaten every 2 s).
 */
export const DEFAULT_BEAT_GAP_MS = 4_000;

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

/**
 * The SQL condition "worker `alias` may be live": it has not stopped, and either its
 * heartbeat is within the liveness window (parameter `$liveness`, ms) or the database
 * has not been steady long enough for an old heartbeat to prove anything (parameters
 * `$steady` and `$gap`, see {@link steadyDatabaseSql}; a null `$steady` takes an old
 * heartbeat as proof, as {@link liveWorkerCondition} does). A worker is gone, for
 * claims and takeovers, when none of its node's workers may be live.
 */
export function mayBeLiveWorkerCondition(
  alias: string,
  p: { liveness: number; steady: number; gap: number },
): string {
  return `(${alias}.status <> 'stopped' and (${alias}.heartbeat_at > now() - ($${p.liveness} * interval '1 millisecond')
    or not ${steadyDatabaseSql(p.steady, p.gap)}))`;
}

/** The `$steady` and `$gap` parameters of {@link mayBeLiveWorkerCondition}. */
export function evidenceParams(evidence: GoneEvidence | undefined): [number | null, number] {
  return evidence ? [evidence.steadyMs, evidence.gapMs] : [null, 0];
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
 * Records a worker, heartbeat now, as `serving` unless another status is given, and
 * beats the database's continuity (`db-continuity.ts`) in the same statement, allowing
 * `gapMs` since the last beat (default {@link DEFAULT_BEAT_GAP_MS}). Registering again
 * revives the row.
 */
export async function registerWorker(
  q: Queryable,
  w: {
    leaseOwner: string;
    nodeId: string;
    status?: Exclude<WorkerStatus, 'stopped'>;
    gapMs?: number;
  },
): Promise<void> {
  await q.query(
    `with continuity as (${continuityBeatSql(4)})
     insert into workbench_worker (lease_owner, node_id, status) values ($1, $2, $3)
     on conflict (lease_owner) do update set status = excluded.status, heartbeat_at = now(),
       stopped_at = null`,
    [w.leaseOwner, w.nodeId, w.status ?? 'serving', w.gapMs ?? DEFAULT_BEAT_GAP_MS],
  );
}

/**
 * Renews a worker's heartbeat and beats the database's continuity, in one statement
 * (`gapMs` as for {@link registerWorker}). A worker marked `stopped` stays stopped;
 * returns false then (or when the row is gone), so the worker knows it is no longer
 * counted live.
 */
export async function heartbeatWorker(
  q: Queryable,
  leaseOwner: string,
  gapMs = DEFAULT_BEAT_GAP_MS,
): Promise<boolean> {
  const rows = await q.query<{ n: number }>(
    `with continuity as (${continuityBeatSql(2)}),
     beat as (update workbench_worker set heartbeat_at = now()
              where lease_owner = $1 and status <> 'stopped' returning 1)
     select count(*)::int as n from beat`,
    [leaseOwner, gapMs],
  );
  return Number(rows[0]?.n ?? 0) > 0;
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

/**
 * Whether `nodeId` has a worker that may be live, and whether it serves or drains.
 * With `evidence`, an old heartbeat counts as gone only when the database has been
 * steady (see {@link mayBeLiveWorkerCondition}); without, at its word.
 */
export async function nodeLiveness(
  q: Queryable,
  nodeId: string,
  livenessMs: number,
  evidence?: GoneEvidence,
): Promise<NodeLiveness> {
  const rows = await q.query<{ serving: boolean; draining: boolean }>(
    `select bool_or(k.status = 'serving') as serving, bool_or(k.status = 'draining') as draining
     from workbench_worker k
     where k.node_id = $1 and ${mayBeLiveWorkerCondition('k', { liveness: 2, steady: 3, gap: 4 })}`,
    [nodeId, livenessMs, ...evidenceParams(evidence)],
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
