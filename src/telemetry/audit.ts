/**
 * The one place that turns a command row into `workspace_command.*` audit metadata.
 *
 * The metadata is built from an explicit allow-list of fields: ids, statuses, codes,
 * counts and durations. A field added to the command row later (or anything in
 * `request`: command text, env, stdin) stays out until someone adds it here on
 * purpose. Output appears only as byte counts and truncation flags.
 *
 * @module
 */

import type { AuditMetadata, NewAuditEvent } from '../store/audit-events.js';
import { insertAuditEvent } from '../store/audit-events.js';
import type { Command, CommandStatus } from '../store/commands.js';
import type { Queryable } from '../store/db.js';

/** Every `workspace_command.*` audit and log event type. */
export const COMMAND_EVENT_TYPES = [
  'workspace_command.queued',
  'workspace_command.running',
  'workspace_command.completed',
  'workspace_command.failed',
  'workspace_command.timed_out',
  'workspace_command.cancelled',
  'workspace_command.recovered_stale',
] as const;

/** A `workspace_command.*` event type. */
export type CommandEventType = (typeof COMMAND_EVENT_TYPES)[number];

/** The event a command's move into `status` is recorded as. */
export function commandEventType(status: CommandStatus): CommandEventType {
  return `workspace_command.${status}`;
}

/**
 * Extra numbers an event may carry (for example live queue counts). Numbers only:
 * nothing an agent wrote can travel in one.
 */
export type CommandEventCounts = Readonly<Record<string, number>>;

const COUNT_NAME = /^[a-z][A-Za-z]{0,40}$/;
const SIGNAL_NAME = /^SIG[A-Z0-9+-]{1,12}$/;

function ms(from: Date | null, to: Date | null): number | null {
  if (from === null || to === null) return null;
  const d = to.getTime() - from.getTime();
  return Number.isFinite(d) ? Math.max(0, d) : null;
}

/**
 * Milliseconds the command waited in the queue before a worker claimed it; null
 * when it never started (still queued, or cancelled while queued).
 */
export function queueWaitMs(command: Command): number | null {
  return ms(command.queuedAt, command.startedAt);
}

/**
 * Milliseconds from claim to terminal status (the time it held a worker slot); null
 * until it has both.
 */
export function commandDurationMs(command: Command): number | null {
  return ms(command.startedAt, command.finishedAt);
}

/**
 * The audit metadata of a command event. Allow-listed fields only; never the request
 * (command text, env, stdin), never stdout or stderr.
 */
export function commandAuditMetadata(
  command: Command,
  counts: CommandEventCounts = {},
): AuditMetadata {
  const metadata: AuditMetadata = {
    commandId: command.id,
    workspaceId: command.workspaceId,
    runId: command.runId,
    conversationId: command.conversationId,
    status: command.status,
    timeoutMs: command.timeoutMs,
    attempts: command.attempts,
    cancelRequested: command.cancelRequested,
    errorCode: command.errorCode,
    errorCategory: command.errorCategory,
    exitCode: command.exitCode,
    signal: command.signal !== null && SIGNAL_NAME.test(command.signal) ? command.signal : null,
    oomKilled: command.oomKilled,
    queueWaitMs: queueWaitMs(command),
    durationMs: commandDurationMs(command),
    execDurationMs: command.execDurationMs,
    stdoutBytes: command.stdout?.length ?? 0,
    stderrBytes: command.stderr?.length ?? 0,
    stdoutTruncated: command.stdoutTruncated,
    stderrTruncated: command.stderrTruncated,
  };
  for (const [name, value] of Object.entries(counts)) {
    // A count never replaces a field above, and only a plain name and a finite number pass.
    if (COUNT_NAME.test(name) && !(name in metadata) && Number.isFinite(value)) {
      metadata[name] = value;
    }
  }
  return metadata;
}

/** The full audit event of a command move, ready for `insertAuditEvent`. */
export function commandAuditEvent(
  eventType: CommandEventType,
  command: Command,
  counts?: CommandEventCounts,
): NewAuditEvent {
  return {
    eventType,
    runId: command.runId,
    workspaceId: command.workspaceId,
    commandId: command.id,
    ownerUserId: command.ownerUserId,
    metadata: commandAuditMetadata(command, counts),
  };
}

/**
 * Where command events are written. The queue calls it inside the transaction that
 * makes the move, so an event exists exactly when the move happened.
 */
export interface CommandAudit {
  /** Writes one event through `q` (the database or the open transaction). */
  record(
    q: Queryable,
    eventType: CommandEventType,
    command: Command,
    counts?: CommandEventCounts,
  ): Promise<void>;
}

/** The standard {@link CommandAudit}: one `audit_event` row per event. */
export const auditEventTable: CommandAudit = {
  async record(q, eventType, command, counts) {
    await insertAuditEvent(q, commandAuditEvent(eventType, command, counts));
  },
};
