/**
 * The durable command queue of one node: commands are rows in Postgres, and every
 * node's `CommandQueue` claims from the same table.
 *
 * A command moves `queued -> running -> completed | failed | timed_out | cancelled`
 * (a queued one may go straight to `cancelled`; a running one whose lease lapsed ends
 * `failed` / `recovered_stale`). Each move is one guarded statement that also writes
 * its audit event (`store/command-events.ts`), so an event exists exactly when the
 * move happened. A claim takes as many queued commands as the worker has free slots.
 *
 * Work reaches a worker three ways: an `enqueue` in this process wakes it at once; on
 * Postgres, an enqueue on another node reaches it by `NOTIFY` when it may claim the
 * command; and a poll every `pollIntervalMs` is the backstop (rows queued by hand, a
 * notice lost while the listening connection was down, workspaces that changed hands).
 * There is no admission cap: commands wait in the queue and the wait is measured.
 * Claims take queued commands by their place, not their arrival alone: a run's later
 * command stands where its previous one stood, at most `followUpLeadMs` before its own
 * arrival, so a run being served does not wait behind every newer run's first command,
 * and no command is passed by one that arrived more than the lead after it
 * (`store/command-place.ts`). A
 * worker claims only commands of runs whose workspace its node holds, or that no live
 * node holds (see `claimCommands`): one workspace, one writer at a time.
 *
 * Each queue is a worker with a row in `workbench_worker` (`worker-presence.ts`),
 * heartbeated every fifth of `livenessMs`. Stale recovery ends running commands of
 * other workers that are gone, and queues again those that never began; an old
 * heartbeat counts as a death only once the database's shared continuity says it has
 * been beaten without a gap for long enough (`recovery-rule.ts`), so an outage is not
 * mistaken for deaths and a young node recovers as soon as an old one would. A worker
 * never recovers its own commands: it records their outcomes itself.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { WorkbenchError } from '../contract/index.js';
import type { Db } from '../store/index.js';
import {
  type Command,
  cancelCommand,
  countLiveCommands,
  enqueueCommand,
  getCommand,
  getCommands,
  type NewCommand,
} from '../store/index.js';
import { type CommandMetrics, createCommandMetrics, StateMachine } from '../telemetry/index.js';
import { isTerminal } from './command-outcome.js';
import { CommandPoll } from './command-poll.js';
import { type CommandTelemetry, createCommandTelemetry } from './command-telemetry.js';
import { CommandWaiters } from './command-waiters.js';
import { summarizeError } from './error-summary.js';
import {
  type Clock,
  type CommandQueueOptions,
  DEFAULT_LIVENESS_MS,
  type EnqueueCall,
  type WaitOptions,
} from './queue-options.js';
import { QUEUE_LIFECYCLE, type QueueState } from './queue-state.js';
import { type LivenessRule, livenessRule, recoveryPeriodMs } from './recovery-rule.js';
import { ABORT_WAIT_MS } from './run-execution.js';
import { recoverStaleRound } from './stale-recovery.js';
import { waitForTerminal } from './terminal-wait.js';
import { WakeUps } from './wake-ups.js';
import { within } from './within.js';
import { WorkerPresence } from './worker-presence.js';
import { WorkerSlots } from './worker-slots.js';

export type { Clock, CommandQueueOptions, EnqueueCall, WaitOptions };
export { DEFAULT_LIVENESS_MS };

/** A claimed row as it was an instant before its claim, for the `.queued` move's line. */
function asStillQueued(command: Command): Command {
  return {
    ...command,
    status: 'queued',
    attempts: 0,
    leaseOwner: null,
    leaseExpiresAt: null,
    startedAt: null,
  };
}

/**
 * How long past the stop grace (and the executor's abort wait) a stopping queue keeps
 * trying to record outcomes before it leaves them to another node's recovery.
 */
const RECORD_GRACE_MS = 5_000;

/** One node's view of the shared command queue: enqueue, wait, cancel, and the worker. */
export class CommandQueue {
  /** The lease owner this queue claims as: unique per queue instance. */
  readonly leaseOwner: string;
  /** The metrics this queue reports to. */
  readonly metrics: CommandMetrics;
  private readonly db: Db;
  private readonly options: CommandQueueOptions;
  private readonly telemetry: CommandTelemetry;
  private readonly clock: Clock;
  private readonly waiters = new CommandWaiters();
  private readonly poll: CommandPoll;
  private readonly slots: WorkerSlots;
  private readonly pending = new Set<Promise<unknown>>();
  private readonly stopLoops = new AbortController();
  private readonly stopPresence = new AbortController();
  private readonly halt = new AbortController();
  private readonly presence: WorkerPresence;
  private readonly livenessMs: number;
  private readonly rule: LivenessRule;
  private readonly machine: StateMachine<QueueState>;
  private loops: Promise<unknown> = Promise.resolve();
  private presenceLoop: Promise<unknown> = Promise.resolve();
  private stopped: Promise<void> | null = null;
  private readonly wakeUps = new WakeUps();

  constructor(options: CommandQueueOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
      throw new RangeError(`concurrency must be a positive integer, got ${options.concurrency}`);
    }
    this.options = options;
    this.db = options.db;
    this.leaseOwner = `${options.nodeId}/${randomUUID().slice(0, 8)}`;
    this.clock = options.clock ?? Date;
    const liveCounts = () => countLiveCommands(options.db);
    const log = options.log.child({ leaseOwner: this.leaseOwner });
    this.metrics = options.metrics ?? createCommandMetrics({ liveCounts });
    this.telemetry = createCommandTelemetry({ log, metrics: this.metrics, liveCounts });
    this.machine = new StateMachine(QUEUE_LIFECYCLE, log);
    this.poll = new CommandPoll({
      read: (ids) => getCommands(options.db, ids),
      periodMs: options.pollIntervalMs,
      skip: (id) => this.slots.active.has(id),
    });
    this.livenessMs = options.livenessMs ?? DEFAULT_LIVENESS_MS;
    this.rule = livenessRule(this.livenessMs);
    this.slots = new WorkerSlots({
      db: options.db,
      leaseOwner: this.leaseOwner,
      options,
      livenessMs: this.livenessMs,
      rule: this.rule,
      telemetry: this.telemetry,
      waiters: this.waiters,
      track: (p) => this.track(p),
      halted: this.halt.signal,
      lifecycle: () => this.lifecycle,
      wake: () => this.wakeUps.wake(),
    });
    this.presence = new WorkerPresence({
      db: options.db,
      leaseOwner: this.leaseOwner,
      nodeId: options.nodeId,
      rule: this.rule,
      onError: (err) => this.telemetry.error('worker_heartbeat', summarizeError(err)),
    });
  }

  /** Where the queue is in its lifecycle. */
  get lifecycle(): QueueState {
    return this.machine.state;
  }

  /** Ids of the commands this node is running now. */
  runningHere(): string[] {
    return [...this.slots.active.keys()];
  }

  /**
   * Queues a command (`id` defaults to a random UUID), in one statement with its event
   * (and, on Postgres, the notice to other nodes' workers). With a `callId` the run
   * already used, nothing is queued: the first command comes back with `created: false`.
   */
  async enqueue(
    command: Omit<NewCommand, 'id'> & { id?: string },
    options: EnqueueCall = {},
  ): Promise<{ command: Command; created: boolean }> {
    // A slot is kept for the command while the statement runs, so claims never
    // overcommit the worker.
    const claim = options.claimHere === true && this.slots.reserveForEnqueue();
    let res: { command: Command; created: boolean };
    try {
      res = await enqueueCommand(
        this.db,
        { ...command, id: command.id ?? randomUUID() },
        {
          ...(this.options.followUpLeadMs === undefined
            ? {}
            : { followUpLeadMs: this.options.followUpLeadMs }),
          ...(this.db.listen
            ? { notify: { sender: this.leaseOwner, nodeId: this.options.nodeId } }
            : {}),
          ...(claim
            ? {
                claim: {
                  leaseOwner: this.leaseOwner,
                  leaseMs: this.options.leaseMs,
                  nodeId: this.options.nodeId,
                },
              }
            : {}),
        },
      );
    } finally {
      if (claim) this.slots.release();
    }
    if (res.created) {
      const claimed =
        res.command.status === 'running' && res.command.leaseOwner === this.leaseOwner;
      this.track(
        claimed
          ? this.telemetry.moved('workspace_command.queued', asStillQueued(res.command), {
              claimedAtEnqueue: true,
            })
          : this.telemetry.moved('workspace_command.queued', res.command),
      );
      // Claimed, it runs in the slot kept for it; queued, a slot that frees looks for it.
      if (claimed) this.slots.run(res.command);
      else this.slots.queuedMore();
    }
    return res;
  }

  /** Reads a command by id: the way back to a result after a lost connection. */
  get(commandId: string): Promise<Command | null> {
    return getCommand(this.db, commandId);
  }

  /**
   * Resolves with the command's row once it is terminal: at once when this node ends
   * it, otherwise on a poll of the rows waited for (one statement per poll for all of
   * them). Rejects with `not_found` for an unknown id, with the signal's reason when
   * `signal` aborts (the command carries on), and with `unavailable` when the queue
   * stops first.
   */
  async waitForTerminal(commandId: string, options: WaitOptions = {}): Promise<Command> {
    options.signal?.throwIfAborted();
    if (options.row && isTerminal(options.row)) return options.row;
    if (this.lifecycle === 'stopped') throw this.stoppedError();
    const deps = {
      db: this.db,
      waiters: this.waiters,
      poll: this.poll,
      runsHere: (id: string) => this.slots.active.has(id),
    };
    return waitForTerminal(deps, commandId, options);
  }

  /**
   * Cancels a command. Queued: it ends `cancelled` now and never runs. Running here:
   * its execution is aborted (the sandbox is killed) and the worker records
   * `cancelled`. Running on another node: the flag is set and that node's worker sees
   * it on its next heartbeat. Returns the row after the request; null when unknown.
   */
  async cancel(commandId: string): Promise<Command | null> {
    const { command, effect } = await cancelCommand(this.db, commandId);
    if (command && effect === 'cancelled') {
      this.track(this.telemetry.moved('workspace_command.cancelled', command));
      this.waiters.settle(command);
    } else if (command && effect === 'flagged') {
      this.telemetry.note('workspace_command.cancelling', command);
      this.slots.active.get(commandId)?.abort('cancel');
    }
    return command;
  }

  /** Starts the worker (once its row is registered) and stale recovery. */
  start(): void {
    if (!this.machine.moveTo('running')) {
      throw new Error(`command queue cannot start: it is ${this.lifecycle}`);
    }
    this.wakeUps.listen({
      db: this.db,
      leaseOwner: this.leaseOwner,
      nodeId: this.options.nodeId,
      onError: (err) => this.telemetry.error('listen', summarizeError(err)),
    });
    const registered = this.presence.register(this.stopLoops.signal);
    this.presenceLoop = registered.then(() =>
      this.presence.heartbeatLoop(this.stopPresence.signal),
    );
    this.loops = Promise.all([
      registered.then((ok) => (ok ? this.workLoop() : undefined)),
      this.recoveryLoop(),
    ]);
  }

  /**
   * Stops claiming while running commands carry on, and tells other nodes this worker
   * drains (they wait for its workspaces' handoff instead of taking them over).
   */
  async drain(): Promise<void> {
    if (!this.machine.moveTo('draining')) return;
    this.wakeUps.wake();
    this.options.log.info({ leaseOwner: this.leaseOwner }, 'command queue draining: no new claims');
    await this.presence.setStatus('draining');
  }

  /** True when no command of `runId` runs on this queue now. */
  idleFor(runId: string): boolean {
    for (const e of this.slots.active.values()) if (e.command.runId === runId) return false;
    return true;
  }

  /**
   * Stops claiming, lets running commands finish for up to `graceMs`, then aborts the
   * rest, which end `node_stopping`. `beforeRetire` runs once nothing runs, while the
   * worker still counts as live; then the worker is marked stopped. Resolves when
   * nothing of this queue is running; pending waits reject with `unavailable`.
   */
  stop(options: { graceMs?: number; beforeRetire?: () => Promise<void> } = {}): Promise<void> {
    this.stopped ??= this.shutDown(options.graceMs ?? 0, options.beforeRetire);
    return this.stopped;
  }

  /**
   * Runs one round of stale recovery now: other workers' running commands whose
   * worker is gone or whose lease lapsed, as `recovery-rule.ts` decides. Returns the
   * commands it moved: those it ended as lost, then those it queued again.
   */
  async recoverStale(): Promise<Command[]> {
    const round = await recoverStaleRound(
      {
        db: this.db,
        leaseOwner: this.leaseOwner,
        rule: this.rule,
        leaseMs: this.options.leaseMs,
        telemetry: this.telemetry,
        waiters: this.waiters,
        track: (p) => this.track(p),
      },
      new Date(this.clock.now()),
    );
    if (round.requeued.some((row) => row.status === 'queued')) this.slots.queuedMore();
    return [...round.lost, ...round.requeued];
  }

  private async shutDown(graceMs: number, beforeRetire?: () => Promise<void>): Promise<void> {
    const wasStarted = this.lifecycle !== 'new';
    this.machine.moveTo('stopping');
    this.stopLoops.abort();
    this.wakeUps.wake();
    await this.loops;
    await this.wakeUps.close();
    const running = [...this.slots.active.values()].map((e) => e.done);
    if (running.length > 0) {
      const all = Promise.all(running).then(() => true);
      if (!(await within(all, graceMs))) {
        for (const e of this.slots.active.values()) e.abort('shutdown');
        // Aborted commands record `node_stopping`; past this, recovery takes them.
        if (!(await within(all, ABORT_WAIT_MS + RECORD_GRACE_MS))) this.halt.abort();
      }
      await all;
    }
    await Promise.all(this.pending);
    // The worker stays live until its last command is recorded and the node has done
    // what it must while still counted live (hand its workspaces off), then stops.
    await beforeRetire?.().catch(() => undefined);
    this.stopPresence.abort();
    await this.presenceLoop;
    if (wasStarted) await this.presence.setStatus('stopped');
    this.waiters.close(this.stoppedError());
    this.machine.moveTo('stopped');
  }

  private stoppedError(): WorkbenchError {
    return new WorkbenchError(
      'unavailable',
      'unavailable: this node stopped its command queue; read the command by id for its outcome',
    );
  }

  private async workLoop(): Promise<void> {
    this.slots.startWorking();
    while (this.lifecycle === 'running') {
      this.wakeUps.clear();
      await this.slots.fill();
      if (this.lifecycle === 'running') await this.wakeUps.idle(this.options.pollIntervalMs);
    }
  }

  private async recoveryLoop(): Promise<void> {
    const period =
      this.options.recoveryIntervalMs ?? recoveryPeriodMs(this.options.leaseMs, this.livenessMs);
    const signal = this.stopLoops.signal;
    while (this.lifecycle === 'running' || this.lifecycle === 'draining') {
      // Old heartbeats prove nothing on their own: the rule asks the shared continuity.
      try {
        await this.recoverStale();
      } catch (err) {
        this.telemetry.error('recover_stale', summarizeError(err));
      }
      await delay(period, undefined, { signal, ref: false }).catch(() => undefined);
    }
  }

  /** Keeps a telemetry promise until it settles, so `stop` can wait for it. */
  private track(p: Promise<unknown>): void {
    const guarded = p.catch(() => undefined);
    this.pending.add(guarded);
    void guarded.finally(() => this.pending.delete(guarded));
  }
}
