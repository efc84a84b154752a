/**
 * The live counts of the shared queue, read off the per-command path. A count is a
 * scan of every queued and running row, so moves never wait for one: they take the
 * counts last read, and start a read in the background when those are older than a
 * second. However fast commands move, a node reads the counts about once a second.
 *
 * @module
 */

import type { LiveCommandCounts } from '../telemetry/index.js';

/** Default of {@link LiveCountsOptions.maxAgeMs}. */
export const LIVE_COUNTS_MAX_AGE_MS = 1000;

/** Options of {@link liveCountsCache}. */
export interface LiveCountsOptions {
  /** Reads the counts (`countLiveCommands`). */
  read: () => Promise<LiveCommandCounts>;
  /** How old counts may be and still be shown, ms. Default {@link LIVE_COUNTS_MAX_AGE_MS}. */
  maxAgeMs?: number;
  /** Called with every successful read (the depth gauge). */
  onRead?: (counts: LiveCommandCounts) => void;
}

/** Counts read lately, and the read that renews them. */
export interface LiveCountsCache {
  /**
   * The counts when they were read within `maxAgeMs`, else null; older (or no) counts
   * start a read unless one is in flight. Never waits and never throws.
   */
  recent(): LiveCommandCounts | null;
  /** Settles once no read is in flight (never rejects). */
  settled(): Promise<void>;
}

/** Builds a {@link LiveCountsCache} over `read`. */
export function liveCountsCache(options: LiveCountsOptions): LiveCountsCache {
  const maxAgeMs = options.maxAgeMs ?? LIVE_COUNTS_MAX_AGE_MS;
  let last: { counts: LiveCommandCounts; at: number } | null = null;
  let inFlight: Promise<void> | null = null;
  const refresh = () => {
    // The read starts on a later tick, so `inFlight` is set before it can settle.
    inFlight ??= Promise.resolve()
      .then(options.read)
      .then((counts) => {
        last = { counts, at: performance.now() };
        options.onRead?.(counts);
      })
      // A failed read shows no counts; a later move tries again.
      .catch(() => undefined)
      .finally(() => {
        inFlight = null;
      });
  };
  return {
    recent() {
      const fresh = last !== null && performance.now() - last.at <= maxAgeMs;
      if (!fresh) refresh();
      return fresh ? last!.counts : null;
    },
    settled: () => inFlight ?? Promise.resolve(),
  };
}
