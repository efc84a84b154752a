/**
 * The slots of one queue's worker: the commands this node runs now (one execution per
 * slot, at most `concurrency`), the claims that fill free slots, and the hand-over of
 * a slot to the command a finish claimed for it. A slot is kept (`reserved`) while a
 * claim statement that may fill it runs, so the worker never runs more than its
 * concurrency.
 *
 * @module
 */

import { type Command, claimCommands, type Db } from '../store/index.js';
import type { CommandTelemetry } from './command-telemetry.js';
import type { CommandWaiters } from './command-waiters.js';
import { summarizeError } from './error-summary.js';
import type { CommandQueueOptions } from './queue-options.js';
import type { QueueState } from './queue-state.js';
import type { LivenessRule } from './recovery-rule.js';
import { type Execution, runExecution } from './run-execution.js';

/** What the slots need from their queue. */
export interface WorkerSlotsDeps {
  readonly db: Db;
  readonly leaseOwner: string;
  readonly options: CommandQueueOptions;
  readonly livenessMs: number;
  readonly rule: LivenessRule;
  readonly telemetry: CommandTelemetry;
  readonly waiters: CommandWaiters;
  /** Keeps a telemetry promise until it settles (the queue's stop waits for them). */
  readonly track: (p: Promise<unknown>) => void;
  /** Aborted when a stopping queue gives up recording outcomes. */
  readonly halted: AbortSignal;
  /** Where the queue is in its lifecycle. */
  readonly lifecycle: () => QueueState;
  /** Wakes the worker loop to claim. */
  readonly wake: () => void;
}

/** See the module comment. */
export class WorkerSlots {
  /** The executions running on this worker, by command id. */
  readonly active = new Map<string, Execution>();
  /**
   * True when the last claim took all it asked for, so more may be queued: a slot that
   * frees then wakes the worker. After a claim that came back short, a freed slot does
   * not (an enqueue, a notice or the poll does), so no claim is spent on an empty queue.
   */
  private backlog = false;
  /** Slots kept for claims whose statement runs now. */
  private reserved = 0;
  /** True once the worker loop runs: its presence is registered, so it may claim. */
  private working = false;

  constructor(private readonly deps: WorkerSlotsDeps) {}

  /** The worker loop runs: from now on it may claim. */
  startWorking(): void {
    this.working = true;
  }

  /** Commands may wait in the queue: the next freed slot (and the worker now) looks. */
  queuedMore(): void {
    this.backlog = true;
    this.deps.wake();
  }

  /**
   * Keeps a slot for a command inserted already claimed, when this worker could start
   * one more now without passing over others: a slot is free, and its last look found
   * nothing more waiting. False when it could not; {@link release} gives a kept slot back.
   */
  reserveForEnqueue(): boolean {
    const free =
      this.deps.lifecycle() === 'running' &&
      this.working &&
      !this.backlog &&
      this.active.size + this.reserved < this.deps.options.concurrency;
    if (free) this.reserved += 1;
    return free;
  }

  /** Gives back a slot {@link reserveForEnqueue} kept. */
  release(): void {
    this.reserved -= 1;
  }

  /** What a claim of this worker may take: its node's runs, or runs no live node holds. */
  get claimAffinity() {
    return {
      nodeId: this.deps.options.nodeId,
      livenessMs: this.deps.livenessMs,
      evidence: this.deps.rule.evidence,
    };
  }

  /**
   * Claims until every slot is busy or nothing is queued: each claim takes up to as
   * many commands as there are free slots, in one statement.
   */
  async fill(): Promise<void> {
    const { concurrency, leaseMs } = this.deps.options;
    while (this.deps.lifecycle() === 'running' && this.active.size + this.reserved < concurrency) {
      const free = concurrency - this.active.size - this.reserved;
      let claimed: Command[];
      this.reserved += free;
      try {
        claimed = await claimCommands(
          this.deps.db,
          this.deps.leaseOwner,
          leaseMs,
          free,
          this.claimAffinity,
        );
      } catch (err) {
        this.deps.telemetry.error('claim', summarizeError(err));
        this.backlog = true;
        return;
      } finally {
        this.reserved -= free;
      }
      this.backlog = claimed.length === free;
      // Claimed rows run even if a stop began meanwhile: the lease is ours now.
      for (const command of claimed) this.run(command);
      if (claimed.length < free) return;
    }
  }

  /** Runs a command this worker claimed, in a slot of its own. */
  run(command: Command): void {
    this.deps.track(this.deps.telemetry.moved('workspace_command.running', command));
    this.launch(command);
  }

  private launch(command: Command): void {
    const { options } = this.deps;
    const execution = runExecution(command, {
      db: this.deps.db,
      leaseOwner: this.deps.leaseOwner,
      leaseMs: options.leaseMs,
      heartbeatMs: Math.max(50, Math.min(options.leaseMs / 3, options.pollIntervalMs)),
      timeoutGraceMs: options.timeoutGraceMs ?? 30_000,
      outputLimitBytes: options.outputLimitBytes ?? 4 * 1024 * 1024,
      execute: options.execute,
      executorMarksBegin: options.executorMarksBegin === true,
      telemetry: this.deps.telemetry,
      waiters: this.deps.waiters,
      track: this.deps.track,
      halted: this.deps.halted,
      // With commands waiting, the finish claims the next for this slot.
      claimNext: () => {
        asked = this.deps.lifecycle() === 'running' && this.backlog;
        return asked
          ? { limit: 1, leaseMs: options.leaseMs, affinity: this.claimAffinity }
          : undefined;
      },
    });
    let asked = false;
    this.active.set(command.id, execution);
    void execution.done.finally(() => {
      this.active.delete(command.id);
      // The slot goes to what the finish claimed, in the same turn: never a free slot
      // another claim could take meanwhile.
      for (const next of execution.claimed) this.run(next);
      if (asked && execution.claimed.length === 0) this.backlog = false;
      if (this.backlog) this.deps.wake();
    });
  }
}
