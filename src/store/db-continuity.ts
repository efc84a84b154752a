/**
 * The database's continuity: one row (`workbench_db_continuity`) that every live
 * worker's heartbeat touches, saying since when the database has been beaten without
 * a gap. It is the evidence that outlives any single node: after a pause or an outage
 * of the database every worker's heartbeat is old at once, and the first beat after
 * it starts a new stretch, so no node (a young one included) reads those old
 * heartbeats as deaths until live workers have had a liveness window to beat again.
 * What follows from it is decided in `src/queue/recovery-rule.ts`.
 *
 * @module
 */

import type { Queryable } from './db.js';
import { date } from './rows.js';

/**
 * What makes an old heartbeat evidence that a worker is gone: the database was beaten
 * without a gap longer than `gapMs` for at least `steadyMs`, and last beaten within
 * `gapMs`. Built by the queue's recovery rule; statements take it as two parameters.
 */
export interface GoneEvidence {
  /** How long the database must have been beaten without a gap, ms. */
  steadyMs: number;
  /** The longest silence between two beats that still counts as continuous, ms. */
  gapMs: number;
}

/**
 * The body of a data-modifying CTE that beats the continuity row: it is made on the
 * first beat, and a beat that finds the last one older than the gap (parameter
 * `$gap`, ms) starts a new stretch. `greatest` keeps the row monotonic when a beat
 * whose transaction began before a later one commits after it.
 */
export function continuityBeatSql(gap: number): string {
  return `insert into workbench_db_continuity as d (id, beaten_since, beaten_at)
     values (1, now(), now())
     on conflict (id) do update set
       beaten_since = case when d.beaten_at < now() - ($${gap} * interval '1 millisecond')
                           then now() else d.beaten_since end,
       beaten_at = greatest(d.beaten_at, now())`;
}

/**
 * The SQL condition "the database has been steady": beaten without a gap for the
 * `$steady` ms parameter and last beaten within the `$gap` one. A null `$steady` asks
 * for no evidence (the condition holds): the caller takes an old heartbeat at its word.
 */
export function steadyDatabaseSql(steady: number, gap: number): string {
  return `($${steady}::float8 is null or exists (
       select 1 from workbench_db_continuity d where d.id = 1
         and d.beaten_since <= now() - ($${steady}::float8 * interval '1 millisecond')
         and d.beaten_at >= now() - ($${gap}::float8 * interval '1 millisecond')))`;
}

/** The continuity row as ages at the database's `now()`; null before the first beat. */
export interface Continuity {
  /** Milliseconds since the current unbroken stretch of beats began. */
  steadyMs: number;
  /** Milliseconds since the last beat. */
  lastBeatAgeMs: number;
  beatenSince: Date;
  beatenAt: Date;
}

/** Milliseconds from `t` to the statement's `now()`, as a number. */
export function ageMsSql(t: string): string {
  return `(extract(epoch from (now() - ${t})) * 1000)::float8`;
}

/** Reads the continuity row. */
export async function readContinuity(q: Queryable): Promise<Continuity | null> {
  const rows = await q.query<{
    steady_ms: number;
    last_beat_age_ms: number;
    beaten_since: Date;
    beaten_at: Date;
  }>(
    `select ${ageMsSql('beaten_since')} as steady_ms, ${ageMsSql('beaten_at')} as last_beat_age_ms,
       beaten_since, beaten_at
     from workbench_db_continuity where id = 1`,
  );
  const r = rows[0];
  if (!r) return null;
  return {
    steadyMs: Number(r.steady_ms),
    lastBeatAgeMs: Number(r.last_beat_age_ms),
    beatenSince: date(r.beaten_since),
    beatenAt: date(r.beaten_at),
  };
}
