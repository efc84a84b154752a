/**
 * A worker's presence in the `workbench_worker` table: registered before it claims
 * anything, heartbeated while it runs, moved to `draining` and `stopped` as the node
 * shuts down. Other nodes read it to decide whether this node still holds its
 * workspaces (claims, takeovers) and whether its commands are lost (recovery).
 *
 * Each heartbeat also beats the database's continuity row (`store/db-continuity.ts`),
 * the evidence every node shares that the database has been answering beats without a
 * gap: after an outage every worker's heartbeat is old at once, and the continuity
 * tells that apart from deaths (`recovery-rule.ts`), for a node that just started too.
 *
 * @module
 */

import { setTimeout as delay } from 'node:timers/promises';
import type { Db } from '../store/index.js';
import {
  heartbeatWorker,
  registerWorker,
  setWorkerStatus,
  type WorkerStatus,
} from '../store/index.js';
import type { LivenessRule } from './recovery-rule.js';

/** Options of {@link WorkerPresence}. */
export interface WorkerPresenceOptions {
  db: Db;
  leaseOwner: string;
  nodeId: string;
  /** The liveness window and what follows from it: the heartbeat period, the gap a beat allows. */
  rule: LivenessRule;
  /** Called when a heartbeat fails (the database is unreachable, say). */
  onError(err: unknown): void;
}

/** Registers, heartbeats and retires one worker row. */
export class WorkerPresence {
  private registered = false;
  private status: Exclude<WorkerStatus, 'stopped'> = 'serving';

  constructor(private readonly options: WorkerPresenceOptions) {}

  /** Milliseconds between heartbeats. */
  get intervalMs(): number {
    return this.options.rule.heartbeatMs;
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
          gapMs: this.options.rule.gapMs,
        });
        this.registered = true;
        return true;
      } catch (err) {
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
        const { db, leaseOwner, nodeId, rule } = this.options;
        if (!(await heartbeatWorker(db, leaseOwner, rule.gapMs))) {
          await registerWorker(db, { leaseOwner, nodeId, status: this.status, gapMs: rule.gapMs });
        }
      } catch (err) {
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
    } catch (err) {
      this.options.onError(err);
    }
  }
}
