/**
 * The growth soak's bounds and their check: pure functions of the samples.
 *
 * A series is one number sampled over time (a process's RSS, the database's size).
 * Each has a bound, either fixed by what the configuration allows (so many sandboxes
 * for so much concurrency) or relative to the series' own level in the warm-up (what a
 * process settles at depends on the machine; that it stays there does not). The
 * warm-up's level is the series' highest sample in the warm-up, so a sample the load
 * happened to catch low does not make the bound tight.
 *
 * @module
 */

const MiB = 1024 * 1024;

/** One sample: when (seconds since the load began), and every series' value. */
export interface Sample {
  readonly t: number;
  /** Taken in the warm-up: sets the level relative bounds are set on, checked against none. */
  readonly warm: boolean;
  readonly values: Readonly<Record<string, number>>;
}

/** A series' bound: fixed, or the warm-up's level times `factor` plus `add`. */
export type Bound =
  | { readonly kind: 'fixed'; readonly limit: number; readonly why: string }
  | {
      readonly kind: 'relative';
      readonly factor: number;
      readonly add: number;
      readonly why: string;
    };

/** How a series kept to its bound after the warm-up. */
export interface SeriesResult {
  readonly series: string;
  /** The bound as people read it, `≤ warm-up max × 1.25 + 32 MiB`, say. */
  readonly bound: string;
  readonly why: string;
  /** The warm-up's level (its highest sample); null for a fixed bound. */
  readonly warmupMax: number | null;
  /** The largest value allowed after the warm-up. */
  readonly limit: number;
  /** The largest value seen after the warm-up, and when. */
  readonly max: number | null;
  readonly maxAt: number | null;
  readonly last: number | null;
  /** Least-squares slope after the warm-up, per hour (to read: a bound, not this, decides). */
  readonly slopePerHour: number | null;
  readonly pass: boolean;
}

/** The slope of `points` ((seconds, value) pairs) per hour; null for fewer than two. */
export function slopePerHour(points: readonly (readonly [number, number])[]): number | null {
  if (points.length < 2) return null;
  const n = points.length;
  const mt = points.reduce((s, [t]) => s + t, 0) / n;
  const mv = points.reduce((s, [, v]) => s + v, 0) / n;
  let num = 0;
  let den = 0;
  for (const [t, v] of points) {
    num += (t - mt) * (v - mv);
    den += (t - mt) ** 2;
  }
  return den === 0 ? null : (num / den) * 3600;
}

/**
 * Checks one series: every sample after the warm-up at most the bound. With no sample
 * in the warm-up (a run too short for one), the first sample sets the level.
 */
export function checkSeries(
  samples: readonly Sample[],
  series: string,
  bound: Bound,
): SeriesResult {
  const at = (s: Sample) => s.values[series];
  const warm = samples.filter((s) => s.warm && at(s) !== undefined).map((s) => at(s)!);
  const after = samples.filter((s) => !s.warm && at(s) !== undefined);
  const warmupMax = warm.length > 0 ? Math.max(...warm) : ((after[0] && at(after[0])) ?? 0);
  const limit =
    bound.kind === 'fixed' ? bound.limit : Math.round(warmupMax * bound.factor + bound.add);
  let max: number | null = null;
  let maxAt: number | null = null;
  for (const s of after) {
    if (max === null || at(s)! > max) {
      max = at(s)!;
      maxAt = s.t;
    }
  }
  const last = after.at(-1);
  return {
    series,
    bound:
      bound.kind === 'fixed'
        ? `≤ ${bound.limit}`
        : `≤ warm-up max × ${bound.factor} + ${bound.add % MiB === 0 ? `${bound.add / MiB} MiB` : bound.add}`,
    why: bound.why,
    warmupMax: bound.kind === 'fixed' ? null : warmupMax,
    limit,
    max,
    maxAt,
    last: last ? at(last)! : null,
    slopePerHour: slopePerHour(after.map((s) => [s.t, at(s)!] as const)),
    pass: max === null || max <= limit,
  };
}

/** What the bounds are set from. */
export interface BoundInputs {
  /** Node processes sampled (`agent`, `wb-a`, `wb-b`). */
  readonly processes: readonly string[];
  /** Replicas. */
  readonly replicas: readonly string[];
  /** Loops of load, each with one run at a time. */
  readonly concurrency: number;
  /** `MEMQL_SANDBOX_WARM_POOL` of each replica. */
  readonly warmPool: number;
}

/**
 * Sandboxes (and their cgroups) the configuration allows at once across the replicas:
 * each replica's warm pool, plus the one it is starting to refill it (the pool fills one
 * at a time); each loop's run, at most two (its warm sandbox, and one more while a
 * sandbox cut by a time limit ends, or a command's own beside a process's); and 4 for
 * ends under way. `R × (W + 1) + 2 × C + 4`.
 */
export function sandboxLimit(b: BoundInputs): number {
  return b.replicas.length * (b.warmPool + 1) + 2 * b.concurrency + 4;
}

/**
 * Entries of one workbench root the configuration allows: the pool's directories and the
 * one it is making (`W + 1`); a staging directory per sandbox of the replica (its pool's,
 * `W + 1`, and two per loop's run, `2 × C`, should every run be on it); a run directory
 * per loop (`C`); the sync's temporary directory; 6 more for ends under way.
 * `2 × (W + 1) + 3 × C + 7`.
 */
export function rootEntryLimit(b: BoundInputs): number {
  return 2 * (b.warmPool + 1) + 3 * b.concurrency + 7;
}

/** Every series the soak samples, with its bound. */
export function growthBounds(b: BoundInputs): Record<string, Bound> {
  const bounds: Record<string, Bound> = {};
  for (const p of b.processes) {
    // A node's heap grows between major collections and falls back (a sawtooth of some
    // 100 MiB under this load); the warm-up's highest holds a peak of it, a quarter
    // more and 32 MiB is headroom. At some 15,000 runs an hour on two cores (each replica
    // serving half), a leak of 20 KiB a run is 150 MiB or more and outgrows it.
    bounds[`rss.${p}`] = {
      kind: 'relative',
      factor: 1.25,
      add: 32 * MiB,
      why: 'the warm-up level plus breathing room; a leak per run outgrows it',
    };
    // The heap a full collection leaves is what the process keeps: the sawtooth does not
    // show in it, a leak does. A quarter more and 16 MiB for caches still filling.
    bounds[`heapAfterGc.${p}`] = {
      kind: 'relative',
      factor: 1.25,
      add: 16 * MiB,
      why: 'the heap kept after a full collection; a leak per run outgrows it',
    };
    // Descriptors come and go with sandboxes (pipes, agent sockets) and connections;
    // the warm-up's highest already holds a full load's worth. 32 more is a few
    // sandboxes' worth; a descriptor kept per run is hundreds within the hour.
    bounds[`fds.${p}`] = {
      kind: 'relative',
      factor: 1,
      add: 32,
      why: 'the warm-up level plus a few sandboxes of pipes; one kept per run outgrows it',
    };
  }
  const sandboxes = sandboxLimit(b);
  const formula = `R × (W + 1) + 2 × C + 4 = ${b.replicas.length} × (${b.warmPool} + 1) + 2 × ${b.concurrency} + 4`;
  bounds.cgroups = {
    kind: 'fixed',
    limit: sandboxes,
    why: `one group per sandbox: ${formula}`,
  };
  bounds.sandboxes = { kind: 'fixed', limit: sandboxes, why: `warm pools and runs: ${formula}` };
  for (const r of b.replicas) {
    bounds[`dirs.${r}`] = {
      kind: 'fixed',
      limit: rootEntryLimit(b),
      why: `pool, staging and run directories: 2 × (W + 1) + 3 × C + 7 = 2 × (${b.warmPool} + 1) + 3 × ${b.concurrency} + 7`,
    };
    // The pool keeps W sandboxes ready and makes one at a time: never more directories.
    bounds[`poolDirs.${r}`] = {
      kind: 'fixed',
      limit: b.warmPool + 1,
      why: `the warm pool's ready sandboxes and the one it is making: W + 1 = ${b.warmPool} + 1`,
    };
    // A loop's run is deleted before its next is made, and the delete answers once the
    // replicas let go of its copy; 2 more for a copy whose command was still ending.
    bounds[`runDirs.${r}`] = {
      kind: 'fixed',
      limit: b.concurrency + 2,
      why: `a run in flight per loop: C + 2 = ${b.concurrency} + 2`,
    };
  }
  // A deleted run's rows go but for its `run` and `workbench_workspace` rows (marked
  // deleted, under 1 KiB a run with their indexes: some 15 MiB an hour here), and
  // autovacuum lets the dead rows' pages be used again. Half again and 16 MiB holds
  // that; a kilobyte more kept per run breaks it within the hour.
  bounds.dbBytes = {
    kind: 'relative',
    factor: 1.5,
    add: 16 * MiB,
    why: 'deleted runs keep only their run and workspace rows; room for them and dead rows',
  };
  // Live rows are those of the runs in flight, so they stay near the warm-up's level;
  // twice it and 64 more is loose, one row kept per run is thousands within the hour.
  for (const table of ['workspace_command', 'audit_event']) {
    bounds[`rows.${table}`] = {
      kind: 'relative',
      factor: 2,
      add: 64,
      why: 'only the runs in flight have rows; one row kept per run outgrows it',
    };
  }
  return bounds;
}
