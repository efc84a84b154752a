/**
 * The statistics of the benchmark harness: pure functions of sample arrays, so they
 * are tested without timing anything.
 *
 * @module
 */

/** Summary of one series of samples (milliseconds, or whatever unit the case uses). */
export interface Summary {
  n: number;
  median: number;
  p95: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/**
 * The `q` quantile (0..1) of `samples` by linear interpolation between closest ranks
 * (the R-7 / NumPy default). NaN for an empty series.
 */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  if (q < 0 || q > 1) throw new RangeError(`quantile ${q} is outside 0..1`);
  const sorted = [...samples].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (b - a) * (pos - lo);
}

/** The median (p50). */
export function median(samples: readonly number[]): number {
  return quantile(samples, 0.5);
}

/** Median, p95, p99, mean, min and max of a series. */
export function summarize(samples: readonly number[]): Summary {
  const n = samples.length;
  return {
    n,
    median: median(samples),
    p95: quantile(samples, 0.95),
    p99: quantile(samples, 0.99),
    mean: n === 0 ? Number.NaN : samples.reduce((s, x) => s + x, 0) / n,
    min: n === 0 ? Number.NaN : Math.min(...samples),
    max: n === 0 ? Number.NaN : Math.max(...samples),
  };
}

/** `subject / baseline`; NaN when the baseline is zero or either is not finite. */
export function ratio(subject: number, baseline: number): number {
  if (!Number.isFinite(subject) || !Number.isFinite(baseline) || baseline === 0) return Number.NaN;
  return subject / baseline;
}

/**
 * The order in which `variants` (indices 0..k-1) are sampled, `rounds` times each:
 * every round takes one sample of each, and the round's order rotates by one each
 * time, so no variant always runs first (after a pause) or last (after the others
 * warmed the caches). Two variants give A B, B A, A B, ...
 */
export function interleavedOrder(variants: number, rounds: number): number[] {
  const order: number[] = [];
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < variants; i++) order.push((i + r) % variants);
  }
  return order;
}
