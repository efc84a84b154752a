/**
 * The `workspace_command.*` events: their types, and their metadata as log lines and
 * audit rows carry it.
 *
 * The metadata is the allow-list of `store/command-events.ts`: ids, statuses, codes,
 * counts and durations, the same fields the move's own statement writes into
 * `audit_event`. A field added to the command row later (or anything in `request`:
 * command text, env, stdin) stays out until someone adds it there on purpose. Output
 * appears only as byte counts and truncation flags.
 *
 * @module
 */

import type { AuditMetadata, Command, CommandStatus, NewAuditEvent } from '../store/index.js';
import { commandEventMetadata } from '../store/index.js';

export { commandDurationMs, queueWaitMs } from '../store/index.js';

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

/**
 * The audit metadata of a command event. Allow-listed fields only; never the request
 * (command text, env, stdin), never stdout or stderr.
 */
export function commandAuditMetadata(
  command: Command,
  counts: CommandEventCounts = {},
): AuditMetadata {
  const metadata = commandEventMetadata(command);
  for (const [name, value] of Object.entries(counts)) {
    // A count never replaces an allow-listed field, and only a plain name and a finite number pass.
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
