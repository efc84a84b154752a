import type { Queryable } from '../store/index.js';
import { heartbeatCommandLease } from '../store/index.js';

/** Options of {@link keepLease}. */
export interface LeaseKeeperOptions {
  db: Queryable;
  commandId: string;
  leaseOwner: string;
  leaseMs: number;
  /** Time between heartbeats, ms. */
  intervalMs: number;
  /**
   * The lease is gone: another worker recovered the command. Stop it, record nothing.
   * A heartbeat that fails (the database is unreachable) is not a loss: the keeper
   * keeps trying, because no other node recovers the command for an outage (see
   * `recovery-rule.ts`) and this node never recovers its own: its outcome is recorded
   * after.
   */
  onLost(): void;
  /** The cancel flag is set (a cancel arrived through another node). */
  onCancelRequested(): void;
  /** A heartbeat failed; the keeper keeps trying. */
  onError(err: unknown): void;
  /** A heartbeat succeeded (the database answered). */
  onReached?(): void;
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
      options.onReached?.();
      if (!hb.held) {
        stopped = true;
        options.onLost();
        return;
      }
      if (hb.cancelRequested && !cancelSeen) {
        cancelSeen = true;
        options.onCancelRequested();
      }
    } catch (err) {
      if (stopped) return;
      options.onError(err);
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
