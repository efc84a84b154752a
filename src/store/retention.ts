/**
 * Retention of the rows that grow with use: finished commands (with their results) and
 * audit events. Each delete takes at most one bounded batch of the oldest rows past
 * retention, by a range scan of an index ordered by age, so a sweep costs what it
 * removes, not what the table holds; concurrent sweepers on several nodes skip each
 * other's rows. Queued and running commands are never deleted (only finished rows have
 * a finish time), and neither is a run's call key: a repeat of a `callId` whose
 * command was deleted finds the key and answers `command_expired`, never runs again.
 *
 * @module
 */

import type { Queryable } from './db.js';

/**
 * How long finished commands and audit events are kept, ms (`MEMQL_COMMAND_KEEP_MS`,
 * `MEMQL_AUDIT_KEEP_MS`); 0 keeps them until their run is deleted.
 */
export interface RowRetention {
  commandKeepMs: number;
  auditKeepMs: number;
}

/**
 * Deletes up to `batchRows` finished commands whose finish is more than `keepMs` ago
 * (by the database's clock), oldest finish first; returns how many. A range scan of
 * `workspace_command_finished_idx`.
 */
export async function deleteExpiredCommands(
  q: Queryable,
  keepMs: number,
  batchRows: number,
): Promise<number> {
  return q.execute(
    `with doomed as (
       select id from workspace_command
       where finished_at < now() - ($1::bigint * interval '1 millisecond')
         and status in ('completed', 'failed', 'timed_out', 'cancelled')
       order by finished_at limit $2 for update skip locked
     )
     delete from workspace_command c using doomed d where c.id = d.id`,
    [keepMs, batchRows],
  );
}

/**
 * Deletes those of the `batchRows` oldest audit events (by id, which grows with time)
 * written more than `keepMs` ago; returns how many. A range scan of the primary key
 * from its start: once the oldest event left is younger than retention, a batch
 * deletes nothing, whatever the table holds.
 */
export async function deleteExpiredAuditEvents(
  q: Queryable,
  keepMs: number,
  batchRows: number,
): Promise<number> {
  return q.execute(
    `with oldest as (
       select id, created_at from audit_event order by id limit $2 for update skip locked
     )
     delete from audit_event a using oldest o
     where a.id = o.id and o.created_at < now() - ($1::bigint * interval '1 millisecond')`,
    [keepMs, batchRows],
  );
}

/**
 * What remains of a command that retention deleted: its run and owner, from its audit
 * events (kept longer than commands), or null when it left none (it never existed, its
 * run was deleted, or its events are past retention too).
 */
export async function findRemovedCommand(
  q: Queryable,
  commandId: string,
): Promise<{ runId: string | null; ownerUserId: string | null } | null> {
  const rows = await q.query(
    `select e.run_id, e.owner_user_id from audit_event e
     where e.command_id = $1
       and not exists (select 1 from workspace_command c where c.id = $1)
     order by e.id limit 1`,
    [commandId],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    runId: r.run_id === null ? null : String(r.run_id),
    ownerUserId: r.owner_user_id === null ? null : String(r.owner_user_id),
  };
}
