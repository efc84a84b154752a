/**
 * Operator telemetry of the command queue: one structured log line per command move,
 * carrying the event type, the allow-listed command fields of the audit metadata and
 * the live queue counts as last read (`live-counts.ts`: at most a second old, absent
 * when older), and the matching Prometheus observations.
 *
 * Lines keep off the path of the call that waits on the command, because a line
 * written by a node that was idle costs about a tenth of a millisecond: the `queued`
 * line of a command claimed in the statement that enqueued it goes at debug (the
 * `running` line written with it says the same, `queueWaitMs: 0`); the `running` line
 * is written in the next loop iteration, once the executor's first statement has gone
 * out, while the node waits for it; and a terminal line is written once the waiters
 * have been told, in the check phase of this turn of the event loop.
 *
 * Log lines use the same allow-list as audit events ({@link commandAuditMetadata}), so
 * command text, env, stdin and output never reach a log line either.
 *
 * @module
 */

import type { Command } from '../store/index.js';
import type { CommandMetrics, LiveCommandCounts, Logger } from '../telemetry/index.js';
import {
  type CommandEventType,
  commandAuditMetadata,
  commandDurationMs,
  queueWaitMs,
} from './command-audit.js';
import { liveCountsCache } from './live-counts.js';

/**
 * Log-only events, beside the audit event types:
 * - `cancelling`: a running command was flagged for cancel; its worker will kill it.
 * - `lease_lost`: a worker's heartbeat found its lease gone; it killed the command and
 *   recorded nothing (whoever took the lease records the end).
 * - `finish_rejected`: a worker's outcome lost the compare-and-set (recovered or
 *   cancelled meanwhile); the stored end stands.
 * - `requeued`: a command that never began went back to the queue (its executor was
 *   refused before starting it, or its worker was lost first); it runs later.
 * - `abandoned`: a stopping node killed a command past its grace period and left it
 *   to stale recovery.
 * - `error`: a queue step failed (database unreachable, executor bug); it is retried
 *   or left to recovery.
 * - `temp_cleanup`: a sweep removed temporary directories.
 */
export type CommandLogEvent =
  | CommandEventType
  | 'workspace_command.cancelling'
  | 'workspace_command.lease_lost'
  | 'workspace_command.finish_rejected'
  | 'workspace_command.requeued'
  | 'workspace_command.abandoned'
  | 'workspace_command.error'
  | 'workspace_command.temp_cleanup';

/** Options of {@link createCommandTelemetry}. */
export interface CommandTelemetryOptions {
  /** The node's logger; lines are written on a `{ component: 'command-queue' }` child. */
  log: Logger;
  metrics: CommandMetrics;
  /**
   * Reads the live counts of the shared queue (`countLiveCommands`): in the
   * background, at most once per `liveCountsMaxAgeMs`, never on a move's path.
   */
  liveCounts: () => Promise<LiveCommandCounts>;
  /** How old counts may be and still go on a log line, ms. Default 1000. */
  liveCountsMaxAgeMs?: number;
}

/** Counts of one temporary-directory sweep. */
export interface TempCleanupCounts {
  /** Directories removed. */
  removed: number;
  /** Directories that could not be removed (retried next sweep). */
  failed: number;
}

/** How a move came about, where its line depends on it. */
export interface MoveNotice {
  /** The command was claimed in the statement that enqueued it. */
  readonly claimedAtEnqueue?: boolean;
}

/** What the queue (and the sweeper) report through. */
export interface CommandTelemetry {
  /**
   * Records a move the audit log also records: metrics, then one log line with the
   * live counts as last read. Resolves once the line is written and a read of the
   * counts it started (when those were stale) is done; the line does not wait for
   * that read. Never throws.
   */
  moved(eventType: CommandEventType, command: Command, how?: MoveNotice): Promise<void>;
  /** Logs a log-only event about a command (see {@link CommandLogEvent}). */
  note(event: CommandLogEvent, command: Command, detail?: Readonly<Record<string, string>>): void;
  /** Logs a queue step that failed; only the error's name and a scrubbed message. */
  error(
    step: string,
    detail: { errorName: string; errorMessage: string; commandId?: string },
  ): void;
  /** Logs the counts of a temporary-directory sweep. */
  tempCleanup(counts: TempCleanupCounts): void;
}

const TERMINAL_EVENTS: ReadonlySet<CommandEventType> = new Set([
  'workspace_command.completed',
  'workspace_command.failed',
  'workspace_command.timed_out',
  'workspace_command.cancelled',
  'workspace_command.recovered_stale',
]);

/** Resolves in the check phase of this turn of the event loop, after its I/O callbacks. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Resolves in the timers phase of the next iteration of the event loop, after this one's I/O. */
function nextIteration(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** Builds the queue's telemetry on a logger and a set of metrics. */
export function createCommandTelemetry(options: CommandTelemetryOptions): CommandTelemetry {
  const log = options.log.child({ component: 'command-queue' });
  const { metrics } = options;
  const live = liveCountsCache({
    read: options.liveCounts,
    ...(options.liveCountsMaxAgeMs === undefined ? {} : { maxAgeMs: options.liveCountsMaxAgeMs }),
    onRead: (counts) => metrics.setLiveCounts(counts),
  });

  return {
    async moved(eventType, command, how = {}) {
      if (eventType === 'workspace_command.queued') metrics.queued();
      if (eventType === 'workspace_command.running') metrics.started(queueWaitMs(command) ?? 0);
      const terminal = TERMINAL_EVENTS.has(eventType);
      if (terminal) {
        metrics.ended(command.status, command.errorCategory, commandDurationMs(command));
      }
      const line = {
        event: eventType,
        ...commandAuditMetadata(command),
        ...(command.status === 'timed_out' ? { timeoutCategory: command.errorCategory } : {}),
        ...(live.recent() ?? {}),
      };
      // The caller tells the waiters right after this returns; the line follows them.
      if (terminal) await nextTurn();
      // The caller starts the command right after this returns; the line waits for the
      // statement it starts with to be written.
      else if (eventType === 'workspace_command.running') await nextIteration();
      if (command.status === 'failed' || command.status === 'timed_out') {
        log.warn(line, eventType);
      } else if (eventType === 'workspace_command.queued' && how.claimedAtEnqueue) {
        log.debug(line, eventType);
      } else {
        log.info(line, eventType);
      }
      await live.settled();
    },
    note(event, command, detail = {}) {
      const line = { event, ...detail, ...commandAuditMetadata(command) };
      if (event === 'workspace_command.cancelling') log.info(line, event);
      else log.warn(line, event);
    },
    error(step, detail) {
      log.error({ event: 'workspace_command.error', step, ...detail }, `command queue: ${step}`);
    },
    tempCleanup(c) {
      log.info(
        { event: 'workspace_command.temp_cleanup', removed: c.removed, failed: c.failed },
        'workspace_command.temp_cleanup',
      );
    },
  };
}
