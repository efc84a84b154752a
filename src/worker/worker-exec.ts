/**
 * `exec` on a worker host: the command runs through the process runner in the user's
 * root (no sandbox: on the user's own machine, their consent is the guard, given on
 * the agent before the call was sent), under the node's time and output limits, with
 * the whole process tree killed on timeout or cancel. There is no command queue or
 * database here, so the answer is the workbench's `exec` answer without what only a
 * durable command has: no `commandId` (nothing to read again by id), no expected
 * outputs and no files refused by a sync.
 *
 * @module
 */

import type { ActionArgs } from '../contract/index.js';
import {
  type EndingAnswer,
  endingAnswer,
  execRequestOf,
  WorkbenchError,
} from '../contract/index.js';
import { type Runner, type RunResult, runInSandbox } from '../sandbox/index.js';

/** What a worker's `exec` answers: the workbench's answer less what a durable command adds. */
export type WorkerExecPayload = EndingAnswer;

/** The worker's `exec` limits, from the node's `MEMQL_EXEC_*` settings. */
export interface WorkerExecLimits {
  /** Timeout of a call that names none, ms. */
  readonly defaultTimeoutMs: number;
  /** Longest timeout a call gets; a longer one is cut to it, ms. */
  readonly maxTimeoutMs: number;
  /** Output kept per stream, bytes. */
  readonly outputLimitBytes: number;
}

/** What {@link workerExec} needs. */
export interface WorkerExecDeps {
  /** The process runner, with the worker's base environment. */
  readonly runner: Runner;
  /** The user's root: commands run in it (or in `cwd` under it). */
  readonly root: string;
  readonly limits: WorkerExecLimits;
}

/** The time limit of one call: its own, else the default, never over the maximum. */
export function execTimeoutMs(requested: number | undefined, limits: WorkerExecLimits): number {
  return Math.min(requested ?? limits.defaultTimeoutMs, limits.maxTimeoutMs);
}

/** The answer for how a command ended. */
export function workerExecPayload(result: RunResult): WorkerExecPayload {
  return endingAnswer(
    {
      status: result.cancelled ? 'cancelled' : result.timedOut ? 'timed_out' : 'completed',
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      cancelled: result.cancelled,
      oomKilled: result.oomKilled,
      stdoutTruncated: result.stdoutTruncated,
      stderrTruncated: result.stderrTruncated,
      durationMs: result.durationMs,
    },
    result.stdout,
    result.stderr,
  );
}

/** The answer of a command cancelled before it started: it never ran. */
export function neverRanPayload(): WorkerExecPayload {
  return {
    status: 'cancelled',
    exitCode: null,
    signal: null,
    timedOut: false,
    cancelled: true,
    oomKilled: false,
    stdout: '',
    stderr: '',
    stdoutTruncated: false,
    stderrTruncated: false,
    durationMs: null,
  };
}

/**
 * Runs one `exec` call. Expected outputs are refused: they become artifacts in the
 * durable store, which a worker host does not have.
 */
export async function workerExec(
  deps: WorkerExecDeps,
  args: ActionArgs<'exec'>,
  ctx: { signal: AbortSignal; onOutput: (stream: 'stdout' | 'stderr', chunk: Buffer) => void },
): Promise<WorkerExecPayload> {
  if (args.outputs !== undefined && args.outputs.length > 0) {
    throw new WorkbenchError(
      'invalid_arguments',
      'invalid_arguments: args.outputs: a worker host keeps no artifacts, so exec on it cannot promote outputs; read the files with fs_read instead',
      { field: 'args.outputs' },
    );
  }
  const { outputs: _outputs, ...request } = execRequestOf(args);
  const result = await runInSandbox(
    {
      runner: { runner: deps.runner, warnings: [] },
      limits: {
        outputLimitBytes: deps.limits.outputLimitBytes,
        // The process runner enforces neither; a worker sets none.
        memoryLimitBytes: 0,
        pidsLimit: 0,
      },
    },
    deps.root,
    request,
    execTimeoutMs(args.timeoutMs, deps.limits),
    ctx,
  );
  return workerExecPayload(result);
}
