/**
 * Drives one spawned command to its end, for every child-process backend: feeds stdin,
 * drains output through the caps, enforces the wall-clock limit and the caller's abort,
 * and always ends with the backend's tree kill so nothing the command started outlives it.
 *
 * How a run ends: `running` → `exited` (the process ended by itself) | `timed_out` |
 * `cancelled` (the tree was killed first). Exactly one of the three wins.
 *
 * @module
 */

import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { type CommandOutput, drainInto } from './output-capture.js';
import type { RunResult } from './runner.js';

/** What {@link superviseChild} needs besides the child. */
export interface SuperviseOptions {
  output: CommandOutput;
  stdin?: string | Uint8Array;
  timeoutMs: number;
  signal?: AbortSignal;
  /**
   * Kills the whole process tree. Called on timeout and cancel, and once more after
   * the child exited (a background process may still hold the output pipes). Must be
   * safe to call repeatedly and after everything is gone.
   */
  killTree: () => Promise<void> | void;
  /** How long to wait for the output pipes to close after the tree kill. Default 2000 ms. */
  drainGraceMs?: number;
}

/** How the child ended, before the backend adds what it knows (OOM, output). */
export interface SupervisedEnd {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
}

/**
 * Resolves when the child has exited and its stdout and stderr are drained (or
 * abandoned after the tree kill and `drainGraceMs`). Rejects only when the process
 * could not be spawned at all.
 */
export function superviseChild(
  child: ChildProcess,
  options: SuperviseOptions,
): Promise<SupervisedEnd> {
  const { output, signal } = options;
  let state: 'running' | 'exited' | 'timed_out' | 'cancelled' = 'running';

  const drained = Promise.all([
    child.stdout ? drainInto(child.stdout, output.stdout) : Promise.resolve(),
    child.stderr ? drainInto(child.stderr, output.stderr) : Promise.resolve(),
  ]);

  if (child.stdin) {
    // A command that exits without reading its input breaks the pipe: not an error.
    child.stdin.on('error', () => {});
    if (options.stdin !== undefined && options.stdin.length > 0) child.stdin.end(options.stdin);
    else child.stdin.end();
  }

  const stop = (why: 'timed_out' | 'cancelled') => {
    if (state !== 'running') return;
    state = why;
    void Promise.resolve(options.killTree()).catch(() => {});
  };
  const timer = setTimeout(() => stop('timed_out'), options.timeoutMs);
  const onAbort = () => stop('cancelled');
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();

  return new Promise<SupervisedEnd>((resolve, reject) => {
    child.once('error', (err) => {
      // 'error' without 'exit' means the spawn itself failed.
      if (child.pid === undefined) {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        reject(err);
      }
    });
    child.once('exit', (code, sig) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      const how = state === 'running' ? 'exited' : state;
      if (state === 'running') state = 'exited';
      void (async () => {
        await Promise.resolve(options.killTree()).catch(() => {});
        const grace = setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
        }, options.drainGraceMs ?? 2000);
        await drained;
        clearTimeout(grace);
        resolve({
          exitCode: code,
          signal: sig,
          timedOut: how === 'timed_out',
          cancelled: how === 'cancelled',
        });
      })();
    });
  });
}

/** Waits for `promise`, but no longer than `ms`. */
export async function withinMs(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    promise,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}

/** Waits until `pid` has exited (gone, or a zombie), for at most `limitMs`. */
export async function waitUntilGone(pid: number, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
    // The state follows the parenthesised command name, which may itself contain ')'.
    if (stat === null || /\)\s+[ZX]\s/.test(stat.slice(stat.lastIndexOf(')')))) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The result of a command whose abort signal fired before anything was started. */
export function cancelledBeforeStart(startedAt: number): RunResult {
  return {
    exitCode: null,
    signal: null,
    timedOut: false,
    cancelled: true,
    oomKilled: false,
    stdout: Buffer.alloc(0),
    stderr: Buffer.alloc(0),
    stdoutTruncated: false,
    stderrTruncated: false,
    durationMs: Math.round(performance.now() - startedAt),
  };
}
