/**
 * A CPU load the bench makes itself, for a case sampled both quiet and loaded:
 * `spinners` child processes of `while :; do :; done`, kept until the 1-minute load
 * average (`/proc/loadavg`) reaches `target`, then while the case samples; stopped
 * after. The machine's own load adds to it, so the figure reached is reported.
 *
 * @module
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import type { BenchContext } from './context.js';

/** The 1-minute load average. */
export async function loadAverage(): Promise<number> {
  return Number((await readFile('/proc/loadavg', 'utf8')).split(' ')[0]);
}

/** A running load. */
export interface CpuLoad {
  readonly spinners: number;
  /** The 1-minute load average when it was reached (or when the wait gave up). */
  readonly reached: number;
  /** Seconds it took to get there. */
  readonly waitedS: number;
  stop(): Promise<void>;
}

/**
 * Starts `spinners` busy loops and waits (at most `maxWaitMs`) until the 1-minute
 * load average is at least `target`.
 */
export async function startCpuLoad(
  ctx: BenchContext,
  spinners: number,
  target: number,
  maxWaitMs = 300_000,
): Promise<CpuLoad> {
  const children: ChildProcess[] = [];
  for (let i = 0; i < spinners; i++) {
    children.push(spawn('sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' }));
  }
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await Promise.all(
      children.map(async (c) => {
        if (c.exitCode !== null || c.signalCode !== null) return;
        const exited = once(c, 'exit');
        c.kill('SIGKILL');
        await exited;
      }),
    );
  };
  ctx.defer(stop);
  const t0 = Date.now();
  let reached = await loadAverage();
  while (reached < target && Date.now() - t0 < maxWaitMs) {
    await new Promise((r) => setTimeout(r, 1_000));
    reached = await loadAverage();
  }
  return { spinners, reached, waitedS: (Date.now() - t0) / 1000, stop };
}
