/**
 * The retention sweep of the queue's rows: finished commands older than
 * `MEMQL_COMMAND_KEEP_MS` and audit events older than `MEMQL_AUDIT_KEEP_MS` are
 * deleted, one bounded batch per statement (`store/retention.ts`), batch after batch
 * until one comes back short or the sweep's batch budget is spent (the next sweep
 * takes the rest). Queued and running commands never go, nor call keys: a repeat of a
 * removed command's `callId`, and a read of it by id, answer `command_expired`.
 *
 * @module
 */

import {
  type Db,
  deleteExpiredAuditEvents,
  deleteExpiredCommands,
  type RowRetention,
} from '../store/index.js';

/** Rows one delete statement removes at most. */
export const RETENTION_BATCH_ROWS = 1_000;
/** Batches one sweep runs at most, per table. */
export const RETENTION_MAX_BATCHES = 100;

/** What one retention sweep deleted. */
export interface RetentionReport {
  commandsDeleted: number;
  auditEventsDeleted: number;
}

/**
 * Deletes finished commands and audit events past retention (a keep of 0 keeps them),
 * at most `batchRows` per statement and `maxBatches` statements per table.
 */
export async function sweepRetention(
  db: Db,
  retention: RowRetention,
  limits: { batchRows?: number; maxBatches?: number } = {},
): Promise<RetentionReport> {
  const batchRows = limits.batchRows ?? RETENTION_BATCH_ROWS;
  const maxBatches = limits.maxBatches ?? RETENTION_MAX_BATCHES;
  const drain = async (keepMs: number, remove: typeof deleteExpiredCommands) => {
    if (keepMs <= 0) return 0;
    let total = 0;
    for (let i = 0; i < maxBatches; i++) {
      const n = await remove(db, keepMs, batchRows);
      total += n;
      if (n < batchRows) break;
    }
    return total;
  };
  return {
    commandsDeleted: await drain(retention.commandKeepMs, deleteExpiredCommands),
    auditEventsDeleted: await drain(retention.auditKeepMs, deleteExpiredAuditEvents),
  };
}
