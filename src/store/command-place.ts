/**
 * Where a command stands in the queue: the fairness rule across runs.
 *
 * Claims take queued commands in the order of their places (`queue_place`, then
 * arrival, then id), one statement over the partial index of queued rows. A place is
 * a time, fixed by the enqueue:
 *
 * - a run's first command stands at its arrival;
 * - a later command of the run stands where the run's previous command stood, but
 *   never more than the follow-up lead `L` (`MEMQL_QUEUE_FOLLOW_UP_LEAD_MS`) before
 *   its own arrival: `place = max(previous place, arrival - L)`.
 *
 * So a run that is being served (a model sending its next command once the last one
 * answered) takes its next command ahead of the first commands of runs that came after
 * it, instead of behind every one of them; and the bound: a command is never passed by
 * one that arrived more than `L` after it. A run that keeps enqueuing stands at least
 * at `arrival - L`, so a new run's first command waits at most for what arrived before
 * it plus `L` of later arrivals. With `L = 0` the queue is first come, first served.
 * A command queued again after its worker was lost keeps its place.
 *
 * @module
 */

/** Default of the follow-up lead, ms (`MEMQL_QUEUE_FOLLOW_UP_LEAD_MS`). */
export const DEFAULT_FOLLOW_UP_LEAD_MS = 30_000;

/**
 * The SQL expression of a new command's place in run `$run`, given the lead in ms as
 * parameter `$lead`: the run's previous command (its newest arrival, one step down the
 * run's index) moved no later than its place, nor earlier than the lead allows; the
 * arrival itself when the run has none.
 */
export function placeSql(run: number, lead: number): string {
  return `coalesce((select greatest(p.queue_place, now() - ($${lead}::bigint * interval '1 millisecond'))
      from workspace_command p where p.run_id = $${run}
      order by p.queued_at desc limit 1), now())`;
}
