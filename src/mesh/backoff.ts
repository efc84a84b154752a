/**
 * Reconnect delays. Pure: the random draw is an argument, so tests pin it.
 *
 * @module
 */

/** Shape of the backoff curve. */
export interface BackoffOptions {
  /** Ceiling of the first delay, ms. */
  readonly initialMs: number;
  /** Largest ceiling, ms. */
  readonly maxMs: number;
  /** Growth of the ceiling per attempt. */
  readonly multiplier: number;
}

/** The mesh's curve: 250 ms doubling to 5 s, so a restarted replica is found within seconds. */
export const DEFAULT_BACKOFF: BackoffOptions = Object.freeze({
  initialMs: 250,
  maxMs: 5_000,
  multiplier: 2,
});

/**
 * The delay before reconnect attempt `attempt` (0 for the first retry), with "equal
 * jitter": half the ceiling is fixed and half is random, so retries from many agents
 * spread out without ever collapsing to zero.
 *
 * @param attempt - retries so far since the last successful connection; negative counts as 0.
 * @param rand - a uniform draw in [0, 1), e.g. `Math.random()`; clamped into that range.
 * @returns milliseconds, within [ceiling / 2, ceiling].
 */
export function nextBackoff(
  attempt: number,
  rand: number,
  options: BackoffOptions = DEFAULT_BACKOFF,
): number {
  const n = Number.isFinite(attempt) && attempt > 0 ? Math.floor(attempt) : 0;
  const ceiling = Math.min(options.maxMs, options.initialMs * options.multiplier ** n);
  const r = Number.isFinite(rand) ? Math.min(Math.max(rand, 0), 1) : 0;
  return Math.round(ceiling / 2 + (r * ceiling) / 2);
}
