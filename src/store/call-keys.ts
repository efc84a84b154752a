/**
 * Idempotency keys: a caller's `callId` names one call of a run, whatever its action.
 * The first call with a key records it (with its digest: the action, arguments and
 * environment hint, hashed); a later call with the key is either that call again (the
 * same digest) or another call (refused by the caller's side). An `exec` or `build`
 * records its key in the statement that queues its command (`commands.ts`); a file
 * action records it here before it acts and its answer once it has one.
 *
 * @module
 */

import type { Queryable } from './db.js';
import { date, dateOrNull, jsonColumn, textOrNull } from './rows.js';

/** A recorded key. */
export interface CallRecord {
  runId: string;
  callId: string;
  action: string;
  /** Null for a key recorded before digests were kept: it replays whatever comes. */
  digest: string | null;
  /** The command an `exec` or `build` queued. */
  commandId: string | null;
  /** A file action's answer, once recorded; null while none is. */
  outcome: unknown;
  /** The node that recorded the key. */
  nodeId: string | null;
  createdAt: Date;
  answeredAt: Date | null;
}

/** A key to record: the call as it arrived. */
export interface CallKey {
  runId: string;
  callId: string;
  action: string;
  digest: string;
  nodeId: string;
}

/**
 * A call's key was recorded for another call (another digest). Thrown by the enqueue;
 * the caller turns it into its refusal.
 */
export class CallIdConflict extends Error {
  override readonly name = 'CallIdConflict';
  constructor(readonly record: CallRecord) {
    super(`callId "${record.callId}" of run "${record.runId}" names another call`);
  }
}

/** Whether a recorded key is the call `digest` describes. */
export function sameCall(record: CallRecord, digest: string): boolean {
  return record.digest === null || record.digest === digest;
}

const COLUMNS =
  'run_id, call_id, action, digest, command_id, outcome, node_id, created_at, answered_at';

function toCallRecord(r: Record<string, unknown>): CallRecord {
  return {
    runId: String(r.run_id),
    callId: String(r.call_id),
    action: String(r.action),
    digest: textOrNull(r.digest),
    commandId: textOrNull(r.command_id),
    outcome: r.outcome === null || r.outcome === undefined ? null : jsonColumn(r.outcome),
    nodeId: textOrNull(r.node_id),
    createdAt: date(r.created_at),
    answeredAt: dateOrNull(r.answered_at),
  };
}

/** Reads a key's record, or null. */
export async function getCallRecord(
  q: Queryable,
  runId: string,
  callId: string,
): Promise<CallRecord | null> {
  const rows = await q.query(
    `select ${COLUMNS} from workbench_call where run_id = $1 and call_id = $2`,
    [runId, callId],
  );
  return rows[0] ? toCallRecord(rows[0]) : null;
}

/**
 * Records `key` for a file action, unless the run has it already: null when this call
 * is the first with it, else the record found (the caller compares digests).
 */
export async function claimCallKey(q: Queryable, key: CallKey): Promise<CallRecord | null> {
  const rows = await q.query(
    `with inserted as (
       insert into workbench_call (run_id, call_id, action, digest, node_id)
       values ($1, $2, $3, $4, $5)
       on conflict do nothing returning 1
     )
     select (select count(*) from inserted) as inserted, ${COLUMNS.split(', ')
       .map((c) => `w.${c}`)
       .join(', ')}
     from (select 1) one
     left join workbench_call w on w.run_id = $1 and w.call_id = $2`,
    [key.runId, key.callId, key.action, key.digest, key.nodeId],
  );
  const row = rows[0];
  if (row && Number(row.inserted) > 0) return null;
  if (row && row.run_id !== null && row.run_id !== undefined) return toCallRecord(row);
  // A concurrent insert of the key committed after this statement's snapshot.
  return getCallRecord(q, key.runId, key.callId);
}

/** Keeps a file action's answer under its key, so a repeat of the call replays it. */
export async function recordCallOutcome(
  q: Queryable,
  runId: string,
  callId: string,
  outcome: unknown,
): Promise<void> {
  await q.execute(
    `update workbench_call set outcome = $3::text::jsonb, answered_at = now()
     where run_id = $1 and call_id = $2 and command_id is null`,
    [runId, callId, JSON.stringify(outcome)],
  );
}
