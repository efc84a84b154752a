import { heartbeatCommandLease } from '../store/commands.js';
import type { Queryable } from '../store/db.js';

/** Options of {@link keepLease}. */
export interface LeaseKeeperOptions {
  db: Queryable;
  commandId: string;
  leaseOwner: string;
  leaseMs: number;
  /** Time between heartbeats, ms. */
  intervalMs: number;
  /**
   * The lease is gone (another worker recovered the command), or no heartbeat has
   * succeeded for a whole lease, so it may be gone: stop the command, record nothing.
   */
  onLost(): void;
  /** The cancel flag is set (a cancel arrived through another node). */
  onCancelRequested(): void;
  /** A heartbeat failed; the keeper keeps trying until the lease would have lapsed. */
  onError(err: unknown): void;
}

/** A running heartbeat; `stop()` resolves once no heartbeat is in flight. */
export interface LeaseKeeper {
  stop(): Promise<void>;
}

/**
 * Heartbeats a running command's lease every `intervalMs` until stopped, reading the
 * cancel flag on each beat. Beats never overlap: the next is scheduled after the last
 * one answers.
 */
export function keepLease(options: LeaseKeeperOptions): LeaseKeeper {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  let lastHeld = performance.now();
  let cancelSeen = false;

  const beat = async () => {
    try {
      const hb = await heartbeatCommandLease(
        options.db,
        options.commandId,
        options.leaseOwner,
        options.leaseMs,
      );
      if (stopped) return;
      if (!hb.held) {
        stopped = true;
        options.onLost();
        return;
      }
      lastHeld = performance.now();
      if (hb.cancelRequested && !cancelSeen) {
        cancelSeen = true;
        options.onCancelRequested();
      }
    } catch (err) {
      if (stopped) return;
      options.onError(err);
      if (performance.now() - lastHeld >= options.leaseMs) {
        stopped = true;
        options.onLost();
        return;
      }
    }
    schedule();
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      inFlight = beat();
    }, options.intervalMs);
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
    },
  };
}
