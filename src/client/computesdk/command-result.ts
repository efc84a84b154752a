/**
 * A ComputeSDK command as an `exec` call, and the `exec` answer as ComputeSDK's
 * `CommandResult`: pure functions of data.
 *
 * @module
 */

import { constants } from 'node:os';
import type { CommandResult, RunCommandOptions } from '@computesdk/provider';
import type { ActionArgsInput, DispatchFailure, ExecPayload } from '../../contract/index.js';
import { ClientError } from '../client-error.js';
import { workspacePath } from './workspace-paths.js';

/** The exit code ComputeSDK reports for a command killed at its time limit (`timeout(1)`'s). */
export const TIMEOUT_EXIT_CODE = 124;

/** The exit code of a command that never ran to an exit of its own (cancelled, lost). */
export const NO_EXIT_CODE = -1;

/**
 * What `exec` takes from a ComputeSDK command and its options (`process_start` takes all
 * but the time limit).
 */
export type CommandArgs = Pick<ActionArgsInput<'exec'>, 'command' | 'cwd' | 'env' | 'timeoutMs'>;

/**
 * The `exec` arguments of `command` (sent as it is: the allowlist checks every program
 * in it) with ComputeSDK's `cwd` (a workspace path, see {@link workspacePath}), `env`
 * and `timeout` (milliseconds).
 */
export function commandArgs(command: string, options: RunCommandOptions = {}): CommandArgs {
  return {
    command,
    ...(options.cwd === undefined ? {} : { cwd: workspacePath(options.cwd) }),
    ...(options.env === undefined ? {} : { env: options.env }),
    ...(options.timeout === undefined ? {} : { timeoutMs: options.timeout }),
  };
}

/**
 * The exit code ComputeSDK callers read: the command's own; 124 when it was killed at
 * its time limit; 128 + the signal's number when a signal killed it (as a shell
 * reports it); -1 when it never ended on its own (cancelled, or never ran).
 */
export function exitCodeOf(payload: ExecPayload): number {
  if (payload.exitCode !== null) return payload.exitCode;
  if (payload.timedOut) return TIMEOUT_EXIT_CODE;
  const number =
    payload.signal === null
      ? undefined
      : constants.signals[payload.signal as keyof typeof constants.signals];
  return number === undefined ? NO_EXIT_CODE : 128 + number;
}

/** Output as text: UTF-8 as it came, base64 (binary output) decoded as UTF-8. */
function text(value: string, encoding: 'base64' | undefined): string {
  return encoding === 'base64' ? Buffer.from(value, 'base64').toString('utf8') : value;
}

/** An `exec` answer as ComputeSDK's result; `elapsedMs` stands in when it never ran. */
export function commandResult(payload: ExecPayload, elapsedMs: number): CommandResult {
  return {
    stdout: text(payload.stdout, payload.stdoutEncoding),
    stderr: text(payload.stderr, payload.stderrEncoding),
    exitCode: exitCodeOf(payload),
    durationMs: payload.durationMs ?? elapsedMs,
  };
}

/**
 * A refused dispatch as the error the provider throws: a {@link ClientError} with the
 * result's stable code, message and payload (the same class the client throws, so a
 * caller matches `err.code` whichever layer refused), and the status the dispatch
 * answered with (200: a refusal is a result there).
 */
export function refusal(failure: DispatchFailure): ClientError {
  return new ClientError(failure.errorCode, failure.message, 200, failure.payload);
}
