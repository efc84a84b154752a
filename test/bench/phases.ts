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

/** One timed call whose command row is read after the sampling. */
interface TimedCall {
  readonly commandId: string;
  readonly totalMs: number;
}

/**
 * Collects the `exec` calls of a case and reads their command rows once the sampling is
 * over. Reading a row between two samples would run a statement on the caller's
 * database pool just before the next call, so an in-process host would start each call
 * on a connection the bench had just woken, and a node process on one left idle.
 */
export class PhaseLog {
  private readonly calls: TimedCall[] = [];

  /** Keeps the call that produced `result` and took `totalMs`, when it ran a command. */
  note(result: DispatchResult, totalMs: number): void {
    if (!result.ok) return;
    const id = (result.payload as { commandId?: string }).commandId;
    if (id) this.calls.push({ commandId: id, totalMs });
  }

  /** The phases of the last `count` calls noted (all of them when omitted). */
  async read(db: Db, count?: number): Promise<ExecPhases[]> {
    const calls = count === undefined ? this.calls : this.calls.slice(-count);
    const out: ExecPhases[] = [];
    for (const call of calls) {
      const p = await execPhases(db, call.commandId, call.totalMs);
      if (p) out.push(p);
    }
    return out;
  }
}

/** Reads the phases of command `id`, whose call took `totalMs`. */
async function execPhases(db: Db, id: string, totalMs: number): Promise<ExecPhases | null> {
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
