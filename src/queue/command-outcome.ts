/**
 * What a worker records when an execution ends: a pure function of how it ended and
 * why, if at all, the worker aborted it.
 *
 * - a result, not aborted by us: `completed` whatever the exit code (a non-zero exit
 *   is the command's answer), or `timed_out` / `command_timeout` when its own limit
 *   ended it;
 * - a rejection, not aborted by us: `failed`, with the error's contract code;
 * - aborted for a cancel: `cancelled`;
 * - aborted by the worker-side backstop (the executor outlived the command's timeout
 *   by the grace period): `timed_out` / `worker_timeout`;
 * - aborted because the lease was lost: nothing (whoever holds the row records it);
 * - aborted because the node is stopping: `failed` / `node_stopping`, with whatever
 *   output it made, unless it finished anyway;
 * - ran, but its file changes could not be kept: `failed` with the sync's code and
 *   category `files_not_saved`, with its real exit and output.
 *
 * A command that never began (its executor refused or failed before starting it, for a
 * reason that may pass: `unavailable`, such as a workspace that moved to another live
 * node or a database that did not answer, or a node stopping) is not recorded at all
 * but queued again ({@link shouldRequeue}): it never ran, so it is not lost.
 *
 * Expected outputs the executor promoted go with a `completed` outcome only (their
 * artifact rows are then recorded by the same statement); with any other, nothing is
 * promoted, and the answer says so from the request.
 *
 * @module
 */

import { type ErrorCode, errorCategory, isErrorCode } from '../contract/index.js';
import type { CommandOutcome } from '../store/index.js';
import { type Command, TERMINAL_COMMAND_STATUSES } from '../store/index.js';
import type { ExecutionResult } from './execution.js';

/** Why a worker aborted an execution. */
export type AbortReason = 'cancel' | 'lease_lost' | 'shutdown' | 'worker_timeout';

/**
 * Categories a `timed_out` command carries in `errorCategory`: the command's own
 * limit (`command_timeout`), or the worker's backstop (`worker_timeout`).
 */
export const TIMEOUT_CATEGORIES = ['command_timeout', 'worker_timeout'] as const;

/** A {@link TIMEOUT_CATEGORIES} entry. */
export type TimeoutCategory = (typeof TIMEOUT_CATEGORIES)[number];

/** How an execution ended, before any decision. */
export type ExecutionEnd =
  | { kind: 'result'; result: ExecutionResult }
  | { kind: 'error'; error: unknown };

/** Category of a command that ran but whose file changes could not be kept. */
export const FILES_NOT_SAVED = 'files_not_saved';

/** Cancelled commands carry this code and category (as a cancel of a queued one does). */
const CANCELLED = { errorCode: 'cancelled', errorCategory: 'cancelled' } as const;

function capped(bytes: Uint8Array, truncated: boolean, limit: number) {
  if (bytes.length <= limit) return { bytes, truncated };
  return { bytes: bytes.subarray(0, limit), truncated: true };
}

function output(result: ExecutionResult | null, limit: number): Omit<CommandOutcome, 'status'> {
  if (result === null) return {};
  const stdout = capped(result.stdout, result.stdoutTruncated, limit);
  const stderr = capped(result.stderr, result.stderrTruncated, limit);
  return {
    exitCode: result.exitCode,
    signal: result.signal,
    oomKilled: result.oomKilled,
    stdout: stdout.bytes,
    stderr: stderr.bytes,
    stdoutTruncated: stdout.truncated,
    stderrTruncated: stderr.truncated,
    execDurationMs: result.durationMs,
    ...(result.filesRefused ? { filesRefused: result.filesRefused } : {}),
    ...(result.egress ? { egress: result.egress } : {}),
    ...(result.workspaceVersion !== undefined ? { workspaceVersion: result.workspaceVersion } : {}),
  };
}

/** The contract code an executor's rejection maps to. */
export function failureCode(error: unknown): ErrorCode {
  const code = (error as { code?: unknown } | null)?.code;
  return isErrorCode(code) ? code : 'internal';
}

/**
 * The outcome to record, or null to record nothing. `outputLimitBytes` caps each
 * stream again, as a backstop to the executor's own cap.
 */
export function decideOutcome(
  end: ExecutionEnd,
  abortReason: AbortReason | null,
  outputLimitBytes: number,
): CommandOutcome | null {
  if (abortReason === 'lease_lost') return null;
  const result = end.kind === 'result' ? end.result : null;
  const out = output(result, outputLimitBytes);
  if (result?.filesNotSaved) {
    return {
      ...out,
      status: 'failed',
      errorCode: result.filesNotSaved.errorCode,
      errorCategory: FILES_NOT_SAVED,
    };
  }
  if (result?.timedOut) {
    return { ...out, status: 'timed_out', errorCategory: 'command_timeout' };
  }
  const stopped = result === null || result.cancelled;
  if (!stopped) {
    const promoted = result.outputs
      ? { outputs: result.outputs.results, artifacts: result.outputs.artifacts }
      : {};
    return { ...out, status: 'completed', ...promoted };
  }
  switch (abortReason) {
    case 'cancel':
      return { ...out, status: 'cancelled', ...CANCELLED };
    case 'worker_timeout':
      return { ...out, status: 'timed_out', errorCategory: 'worker_timeout' };
    case 'shutdown':
      return { ...out, status: 'failed', errorCode: 'node_stopping', errorCategory: 'shutdown' };
    case null:
      if (result !== null) return { ...out, status: 'cancelled', ...CANCELLED };
      break;
  }
  const code = failureCode(end.kind === 'error' ? end.error : null);
  return { status: 'failed', errorCode: code, errorCategory: errorCategory(code) };
}

/**
 * How many claims a command that keeps being refused before it begins may take; the
 * last refusal is then recorded as its outcome, so a command never circles forever.
 */
export const MAX_CLAIMS = 10;

/**
 * Whether an execution that ended before its command began goes back to the queue
 * instead of being recorded: it was rejected for a reason that may pass (code
 * `unavailable`) or cut by the node stopping, it was not cancelled, and it has not
 * used up {@link MAX_CLAIMS}. Pure.
 */
export function shouldRequeue(
  end: ExecutionEnd,
  abortReason: AbortReason | null,
  began: boolean,
  attempts: number,
): boolean {
  if (began || end.kind !== 'error' || attempts >= MAX_CLAIMS) return false;
  if (abortReason === 'shutdown') return true;
  return abortReason === null && failureCode(end.error) === 'unavailable';
}

const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_COMMAND_STATUSES);

/** Whether a command has reached a status it never leaves. */
export function isTerminal(command: Command): boolean {
  return TERMINAL.has(command.status);
}
