/**
 * Where the time of one `exec` goes inside the pipeline, read from the command row's
 * own timestamps (`queued_at`, `started_at`, `finished_at`, `exec_duration_ms`), so a
 * gap against a baseline is attributed by measurement, not by guess.
 *
 * @module
 */

import type { DispatchResult } from '../../src/contract/index.js';
import type { Db } from '../../src/store/index.js';
import { median } from './stats.js';

/** Milliseconds of one call, split by the command row's timestamps. */
export interface ExecPhases {
  /** The whole `handleDispatch` as the caller saw it. */
  total: number;
  /** Before the row was inserted, and after it finished until the caller had the answer. */
  outside: number;
  /** Queued until claimed. */
  queueWait: number;
  /** Claimed until finished, minus the runner: reconcile, sync, lease and result writes. */
  executorOverhead: number;
  /** The runner's own measure of the sandbox run. */
  runner: number;
}

/** Reads the phases of the exec that produced `result`, which took `totalMs`. */
export async function execPhases(
  db: Db,
  result: DispatchResult,
  totalMs: number,
): Promise<ExecPhases | null> {
  if (!result.ok) return null;
  const id = (result.payload as { commandId?: string }).commandId;
  if (!id) return null;
  const rows = await db.query<{ wait: number; exec: number; dur: number | null }>(
    `select extract(epoch from (started_at - queued_at)) * 1000 as wait,
            extract(epoch from (finished_at - started_at)) * 1000 as exec,
            exec_duration_ms as dur
       from workspace_command where id = $1`,
    [id],
  );
  const row = rows[0];
  if (!row) return null;
  const wait = Number(row.wait);
  const exec = Number(row.exec);
  const runner = Number(row.dur ?? 0);
  return {
    total: totalMs,
    outside: totalMs - wait - exec,
    queueWait: wait,
    executorOverhead: exec - runner,
    runner,
  };
}

/** `outside 3.1, queue wait 0.4, ...`: the median of each phase over many calls. */
export function describePhases(all: readonly ExecPhases[]): string {
  if (all.length === 0) return 'no phase data';
  const m = (k: keyof ExecPhases) => median(all.map((p) => p[k])).toFixed(2);
  return `p50 phases (ms, from command row timestamps): total ${m('total')} = runner ${m('runner')} + queue wait ${m('queueWait')} + executor overhead (reconcile, sync, row writes) ${m('executorOverhead')} + outside the row (parse, run row, workspace row, enqueue, wake-up of the waiter) ${m('outside')}`;
}
