/**
 * The statements of stale recovery and of putting a command back in the queue: what a
 * running command's worker looks like now (read in one statement, for the queue's
 * recovery rule to decide on), ending as lost those that rule gives up, and queueing
 * again those that never started. The decision is not made here: see
 * `src/queue/recovery-rule.ts`. Each write is a compare-and-set on status and lease
 * owner, with its audit event in the same statement.
 *
 * @module
 */

import { commandEventsInsert } from './command-events.js';
import { COLUMNS, type Command, columnsOf, toCommand } from './command-row.js';
import type { Queryable } from './db.js';
import { ageMsSql } from './db-continuity.js';
import type { WorkerStatus } from './workers.js';

/** A running command that may be stale, with what recovery decides on, as of one statement. */
export interface StaleCandidate {
  id: string;
  runId: string;
  leaseOwner: string;
  /** Whether its worker marked it begun (about to start its sandbox). */
  began: boolean;
  /** Milliseconds past its lease's expiry by the caller's clock; negative while current. */
  leaseOverdueMs: number;
  /** Its worker's row, or null when there is none. */
  worker: { status: WorkerStatus; heartbeatAgeMs: number } | null;
  /** The database's continuity (`db-continuity.ts`), or null before the first beat. */
  database: { steadyMs: number; lastBeatAgeMs: number } | null;
}

/**
 * Reads the running commands not owned by `exceptOwner` whose lease expired before
 * `now` (the caller's clock) or whose worker is stopped, missing or silent for longer
 * than `livenessMs`, oldest lease first, at most `limit`; with the database's
 * continuity read by the same statement.
 */
export async function readStaleCandidates(
  q: Queryable,
  now: Date,
  opts: { livenessMs: number; exceptOwner?: string; limit?: number },
): Promise<StaleCandidate[]> {
  const rows = await q.query<{
    id: string;
    run_id: string;
    lease_owner: string;
    began: boolean;
    lease_overdue_ms: number;
    worker_status: WorkerStatus | null;
    heartbeat_age_ms: number | null;
    steady_ms: number | null;
    last_beat_age_ms: number | null;
  }>(
    `select c.id, c.run_id, c.lease_owner, c.began_at is not null as began,
       (extract(epoch from ($1::timestamptz - c.lease_expires_at)) * 1000)::float8
         as lease_overdue_ms,
       k.status as worker_status, ${ageMsSql('k.heartbeat_at')} as heartbeat_age_ms,
       ${ageMsSql('d.beaten_since')} as steady_ms, ${ageMsSql('d.beaten_at')} as last_beat_age_ms
     from workspace_command c
     left join workbench_worker k on k.lease_owner = c.lease_owner
     left join workbench_db_continuity d on d.id = 1
     where c.status = 'running' and c.lease_owner is distinct from $2
       and (c.lease_expires_at < $1 or k.lease_owner is null or k.status = 'stopped'
            or k.heartbeat_at <= now() - ($3 * interval '1 millisecond'))
     order by c.lease_expires_at, c.id limit $4`,
    [now, opts.exceptOwner ?? null, opts.livenessMs, opts.limit ?? 100],
  );
  return rows.map((r) => ({
    id: String(r.id),
    runId: String(r.run_id),
    leaseOwner: String(r.lease_owner),
    began: r.began === true,
    leaseOverdueMs: Number(r.lease_overdue_ms),
    worker:
      r.worker_status === null
        ? null
        : { status: r.worker_status, heartbeatAgeMs: Number(r.heartbeat_age_ms) },
    database:
      r.steady_ms === null
        ? null
        : { steadyMs: Number(r.steady_ms), lastBeatAgeMs: Number(r.last_beat_age_ms) },
  }));
}

/** A running command as someone saw it: the compare-and-set key of a recovery's write. */
export interface HeldCommand {
  id: string;
  leaseOwner: string;
}

/**
 * Ends running commands as `failed`, code `command_lost`, category `recovered_stale`,
 * each only if it still runs under the lease owner given, with a
 * `workspace_command.recovered_stale` event each, in one statement. A recovered
 * command is never queued again, so it never runs twice; a late finish under the old
 * lease loses the compare-and-set.
 */
export async function endLostCommands(
  q: Queryable,
  commands: readonly HeldCommand[],
): Promise<Command[]> {
  if (commands.length === 0) return [];
  const rows = await q.query(
    `with s as (select * from unnest($1::text[], $2::text[]) as s(id, lease_owner)),
     recovered as (
       update workspace_command c set status = 'failed', error_code = 'command_lost',
         error_category = 'recovered_stale', finished_at = now(), lease_owner = null,
         lease_expires_at = null
       from s where c.id = s.id and c.status = 'running' and c.lease_owner = s.lease_owner
       returning ${columnsOf('c')}
     ), events as (${commandEventsInsert('recovered', 'recovered_stale')})
     select ${COLUMNS} from recovered`,
    [commands.map((c) => c.id), commands.map((c) => c.leaseOwner)],
  );
  return rows.map(toCommand);
}

/**
 * Puts running commands that never began back in the queue, each only if it still
 * runs under the lease owner given and was never marked begun: it keeps its place
 * (its `queued_at`) and its attempts, and writes a `workspace_command.queued` event.
 * One whose cancel was asked for meanwhile ends `cancelled` instead. Returns the rows
 * as they now are.
 */
export async function requeueCommands(
  q: Queryable,
  commands: readonly HeldCommand[],
): Promise<Command[]> {
  if (commands.length === 0) return [];
  const rows = await q.query(
    `with s as (select * from unnest($1::text[], $2::text[]) as s(id, lease_owner)),
     requeued as (
       update workspace_command c set
         status = case when c.cancel_requested then 'cancelled' else 'queued' end,
         error_code = case when c.cancel_requested then 'cancelled' end,
         error_category = case when c.cancel_requested then 'cancelled' end,
         finished_at = case when c.cancel_requested then now() end,
         started_at = case when c.cancel_requested then c.started_at end,
         lease_owner = null, lease_expires_at = null
       from s where c.id = s.id and c.status = 'running' and c.lease_owner = s.lease_owner
         and c.began_at is null
       returning ${columnsOf('c')}
     ), events as (${commandEventsInsert('requeued')})
     select ${COLUMNS} from requeued`,
    [commands.map((c) => c.id), commands.map((c) => c.leaseOwner)],
  );
  return rows.map(toCommand);
}

/**
 * Marks a running command begun: its worker is about to start it. From then on it is
 * never queued again. False when it no longer runs under `leaseOwner` (recovered or
 * queued again meanwhile): the worker must not start it.
 */
export async function markCommandBegan(
  q: Queryable,
  id: string,
  leaseOwner: string,
): Promise<boolean> {
  const n = await q.execute(
    `update workspace_command set began_at = coalesce(began_at, now())
     where id = $1 and status = 'running' and lease_owner = $2`,
    [id, leaseOwner],
  );
  return n > 0;
}
