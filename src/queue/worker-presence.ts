/**
 * A worker's presence in the `workbench_worker` table: registered before it claims
 * anything, heartbeated while it runs, moved to `draining` and `stopped` as the node
 * shuts down. Other nodes read it to decide whether this node still holds its
 * workspaces (claims, takeovers) and whether its commands are lost (recovery).
 *
 * It also tracks how long this node has reached the database without a failure.
 * After an outage every worker's heartbeat is old at once; a node must not read that
 * as "everyone died", so stale recovery waits until the database has answered this
 * node continuously for two liveness windows. A live worker renews five times per
 * window once its driver has reconnected (within 2 s, see `postgres-driver.ts`), so by
 * then every live worker has renewed. A node that just started waits the same.
 *
 * @module
 */

import { setTimeout as delay } from 'node:timers/promises';
import type { Db } from '../store/db.js';
import {
  heartbeatWorker,
  registerWorker,
  setWorkerStatus,
  type WorkerStatus,
} from '../store/workers.js';

/** Options of {@link WorkerPresence}. */
export interface WorkerPresenceOptions {
  db: Db;
  leaseOwner: string;
  nodeId: string;
  /** How long a heartbeat counts the worker live, ms; it beats five times per window. */
  livenessMs: number;
  /** Called when a heartbeat fails (the database is unreachable, say). */
  onError(err: unknown): void;
}

/** Registers, heartbeats and retires one worker row. */
export class WorkerPresence {
  private reachableSince: number | null = null;
  private registered = false;
  private status: Exclude<WorkerStatus, 'stopped'> = 'serving';

  constructor(private readonly options: WorkerPresenceOptions) {}

  /** Milliseconds between heartbeats. */
  get intervalMs(): number {
    return Math.max(50, Math.floor(this.options.livenessMs / 5));
  }

  /** Notes a database call of this node that succeeded. */
  reached(): void {
    this.reachableSince ??= performance.now();
  }

  /** Notes a database call of this node that failed. */
  failed(): void {
    this.reachableSince = null;
  }

  /**
   * True once the database has answered this node without a failure for two liveness
   * windows: only then is an old heartbeat evidence of a dead worker.
   */
  steadyForRecovery(): boolean {
    return (
      this.reachableSince !== null &&
      performance.now() - this.reachableSince >= 2 * this.options.livenessMs
    );
  }

  /**
   * Registers the worker, retrying until it succeeds or `signal` aborts. A worker
   * claims nothing before this: a claimed command with no live worker row would look
   * lost to every other node.
   */
  async register(signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      try {
        await registerWorker(this.options.db, {
          leaseOwner: this.options.leaseOwner,
          nodeId: this.options.nodeId,
        });
        this.registered = true;
        this.reached();
        return true;
      } catch (err) {
        this.failed();
        this.options.onError(err);
        await delay(this.intervalMs, undefined, { signal, ref: false }).catch(() => undefined);
      }
    }
    return false;
  }

  /** Heartbeats until `signal` aborts; a row that vanished is registered again. */
  async heartbeatLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await delay(this.intervalMs, undefined, { signal, ref: false }).catch(() => undefined);
      if (signal.aborted || !this.registered) continue;
      try {
        if (!(await heartbeatWorker(this.options.db, this.options.leaseOwner))) {
          await registerWorker(this.options.db, {
            leaseOwner: this.options.leaseOwner,
            nodeId: this.options.nodeId,
            status: this.status,
          });
        }
        this.reached();
      } catch (err) {
        this.failed();
        this.options.onError(err);
      }
    }
  }

  /**
   * Moves the worker to `status`; a failure is reported, not thrown. Stop the
   * heartbeat loop before `stopped`, or a later beat would register the row again.
   */
  async setStatus(status: WorkerStatus): Promise<void> {
    if (status !== 'stopped') this.status = status;
    if (!this.registered) return;
    try {
      await setWorkerStatus(this.options.db, this.options.leaseOwner, status);
      this.reached();
    } catch (err) {
      this.failed();
      this.options.onError(err);
    }
  }
}
