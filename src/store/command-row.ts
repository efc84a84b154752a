/**
 * A `workspace_command` row as the queue sees it, and how it is read: the columns every
 * command statement returns and their decoding.
 *
 * @module
 */

import {
  type CommandEgress,
  type CommandStatus,
  type ExecRequest,
  type ExpectedOutputResult,
  type FilesRefused,
  parseExecRequest,
} from '../contract/index.js';
import { headOfRow, type WorkspaceHead } from './manifest.js';
import { bytesOrNull, date, dateOrNull, textOrNull } from './rows.js';

export type { CommandStatus, FilesRefused };

/** Statuses a command never leaves. */
export const TERMINAL_COMMAND_STATUSES = ['completed', 'failed', 'timed_out', 'cancelled'] as const;

/** A terminal command status. */
export type TerminalCommandStatus = (typeof TERMINAL_COMMAND_STATUSES)[number];

/**
 * A command row. `request` holds what the runner needs, as it was written; it is never
 * audited. It is read as an `exec` request once, here where the row is read
 * (`execRequest`), and everything after takes that typed value.
 */
export interface Command {
  id: string;
  runId: string;
  workspaceId: string | null;
  ownerUserId: string;
  conversationId: string | null;
  callId: string | null;
  status: CommandStatus;
  request: Record<string, unknown>;
  /**
   * `request` read back as an `exec` request (the queue row boundary); null when the
   * row holds anything else, which only a row written by something other than `exec`
   * can: such a command never runs.
   */
  execRequest: ExecRequest | null;
  timeoutMs: number;
  attempts: number;
  leaseOwner: string | null;
  leaseExpiresAt: Date | null;
  cancelRequested: boolean;
  exitCode: number | null;
  errorCode: string | null;
  errorCategory: string | null;
  stdout: Buffer | null;
  stderr: Buffer | null;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  /** The signal that ended the command, if the executor reported one. */
  signal: string | null;
  /** True when the memory limit ended the command, where the executor can tell. */
  oomKilled: boolean;
  /** How long the execution itself ran, as the executor measured it (ms). */
  execDurationMs: number | null;
  /**
   * Entries the command left that its sync could not keep; null or absent when none
   * (read rows always carry it).
   */
  filesRefused?: FilesRefused | null;
  /**
   * What became of the expected outputs, as the finish recorded them when the command
   * succeeded; null otherwise (absent on rows read without it, such as list items).
   */
  outputs?: ExpectedOutputResult[] | null;
  /**
   * What the command's network did (its refused destinations), for a command that ran
   * with its run's network; null otherwise (absent on rows read without it).
   */
  egress?: CommandEgress | null;
  /** The workspace version its sync left (see `ExecPayload.version`); null when none. */
  workspaceVersion?: number | null;
  queuedAt: Date;
  /**
   * Its place in the queue (see `command-place.ts`): claims take queued commands in the
   * order of their places. Its arrival for a run's first command; for a later one, the
   * run's previous place, never more than the follow-up lead before its arrival.
   */
  queuePlace: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  /**
   * The run's manifest head and holder as the statement that claimed the command saw
   * them (claimed as it was queued, by a worker's claim, or by the finish of another
   * command); absent on every other read. The executor takes it instead of reading the
   * head again.
   */
  claimedHead?: WorkspaceHead;
}

/** The columns every command statement returns, in the order {@link toCommand} reads. */
export const COLUMNS = `id, run_id, workspace_id, owner_user_id, conversation_id, call_id, status,
  request, timeout_ms, attempts, lease_owner, lease_expires_at, cancel_requested, exit_code,
  error_code, error_category, stdout, stderr, stdout_truncated, stderr_truncated, signal,
  oom_killed, exec_duration_ms, files_refused, outputs, egress, workspace_version, queued_at,
  queue_place, started_at, finished_at`;

/** {@link COLUMNS} qualified by a table alias (`c.id, c.run_id, ...`). */
export function columnsOf(alias: string): string {
  return COLUMNS.replace(/(\w+)/g, `${alias}.$1`);
}

function jsonOrNull<T>(v: unknown): T | null {
  if (v === null || v === undefined) return null;
  // Drivers hand jsonb back parsed; a text value is parsed here.
  return (typeof v === 'string' ? JSON.parse(v) : v) as T;
}

/** Decodes a row of {@link COLUMNS}. */
export function toCommand(r: Record<string, unknown>): Command {
  return {
    id: String(r.id),
    runId: String(r.run_id),
    workspaceId: textOrNull(r.workspace_id),
    ownerUserId: String(r.owner_user_id),
    conversationId: textOrNull(r.conversation_id),
    callId: textOrNull(r.call_id),
    status: r.status as CommandStatus,
    request: (r.request ?? {}) as Record<string, unknown>,
    execRequest: parseExecRequest(r.request),
    timeoutMs: Number(r.timeout_ms),
    attempts: Number(r.attempts),
    leaseOwner: textOrNull(r.lease_owner),
    leaseExpiresAt: dateOrNull(r.lease_expires_at),
    cancelRequested: r.cancel_requested === true,
    exitCode: r.exit_code === null || r.exit_code === undefined ? null : Number(r.exit_code),
    errorCode: textOrNull(r.error_code),
    errorCategory: textOrNull(r.error_category),
    stdout: bytesOrNull(r.stdout),
    stderr: bytesOrNull(r.stderr),
    stdoutTruncated: r.stdout_truncated === true,
    stderrTruncated: r.stderr_truncated === true,
    signal: textOrNull(r.signal),
    oomKilled: r.oom_killed === true,
    execDurationMs:
      r.exec_duration_ms === null || r.exec_duration_ms === undefined
        ? null
        : Number(r.exec_duration_ms),
    filesRefused: jsonOrNull<FilesRefused>(r.files_refused),
    ...('outputs' in r ? { outputs: jsonOrNull<ExpectedOutputResult[]>(r.outputs) } : {}),
    ...('egress' in r ? { egress: jsonOrNull<CommandEgress>(r.egress) } : {}),
    ...('workspace_version' in r
      ? {
          workspaceVersion:
            r.workspace_version === null || r.workspace_version === undefined
              ? null
              : Number(r.workspace_version),
        }
      : {}),
    // Only a claimed row carries its head: an enqueue that asked to claim may have queued.
    ...('head_version' in r && r.status === 'running' ? { claimedHead: headOfRow(r) } : {}),
    queuedAt: date(r.queued_at),
    queuePlace: date(r.queue_place ?? r.queued_at),
    startedAt: dateOrNull(r.started_at),
    finishedAt: dateOrNull(r.finished_at),
  };
}
