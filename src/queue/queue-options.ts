/**
 * The options of a `CommandQueue` and of its calls.
 *
 * @module
 */

import type { OutputSink } from '../contract/index.js';
import type { Command, Db } from '../store/index.js';
import type { CommandMetrics, Logger } from '../telemetry/index.js';
import type { ExecuteCommand } from './execution.js';

/** A source of wall-clock time (ms since the epoch); tests pass one that runs ahead. */
export interface Clock {
  now(): number;
}

/** Options of `CommandQueue`. */
export interface CommandQueueOptions {
  db: Db;
  /** This node's id (`MEMQL_NODE_ID`); lease owners are `<nodeId>/<random>`. */
  nodeId: string;
  /** Commands this node runs at once (`MEMQL_COMMAND_CONCURRENCY`). */
  concurrency: number;
  /** Lease of a running command, ms (`MEMQL_COMMAND_LEASE_MS`). */
  leaseMs: number;
  /**
   * Idle poll period of the worker and of waiters, ms (`MEMQL_QUEUE_POLL_INTERVAL_MS`).
   * Heartbeats run every `min(leaseMs / 3, pollIntervalMs)` (at least 50 ms), so a
   * cancel made through another node reaches the worker within about one poll.
   */
  pollIntervalMs: number;
  /** Runs one claimed command (the host's sandbox call). */
  execute: ExecuteCommand;
  /**
   * True when `execute` calls `ctx.begin()` itself, right before it starts the
   * command, so a command refused before that is queued again. Default false: the
   * queue marks each command begun before handing it to `execute`.
   */
  executorMarksBegin?: boolean;
  /** The node's logger. */
  log: Logger;
  /** Prometheus series. Default: a fresh set on its own registry (see `metrics`). */
  metrics?: CommandMetrics;
  /**
   * Wall clock for stale recovery's cutoff. Leases are stamped with the database's
   * clock, so node clocks should agree with it. Default `Date`.
   */
  clock?: Clock;
  /**
   * How long a worker's heartbeat counts it live, ms (`MEMQL_NODE_LIVENESS_MS`).
   * Default 10000. A node silent for longer is gone: its workspaces may be taken
   * over and its running commands are recovered as lost.
   */
  livenessMs?: number;
  /**
   * Period of stale recovery, ms. Default half of `min(leaseMs, livenessMs)`. A lost
   * worker's commands reach a terminal row within `livenessMs` plus this period of its
   * last heartbeat (see `recovery-rule.ts`).
   */
  recoveryIntervalMs?: number;
  /**
   * How long past a command's `timeoutMs` the worker waits for its executor before
   * aborting it itself (`timed_out` / `worker_timeout`), ms. Default 30000.
   */
  timeoutGraceMs?: number;
  /** Backstop cap on stored stdout and stderr, bytes each. Default 4 MiB. */
  outputLimitBytes?: number;
  /**
   * How far before its arrival a run's later command may stand in the queue, ms
   * (`MEMQL_QUEUE_FOLLOW_UP_LEAD_MS`). Default 30000; 0 is first come, first served.
   * Claims go by place: a run's first command stands at its arrival, a later one where
   * the run's previous command stood but never more than this before its own arrival,
   * so no command is passed by one that arrived more than this after it.
   */
  followUpLeadMs?: number;
}

/** Options of one `CommandQueue.enqueue`. */
export interface EnqueueCall {
  /**
   * The caller's node holds the run's workspace: when this worker has a free slot and
   * nothing queued waits, the command is inserted already claimed and starts at once
   * (its `.queued` and `.running` events written in the same statement).
   */
  readonly claimHere?: boolean;
}

/** Options of `CommandQueue.waitForTerminal`. */
export interface WaitOptions {
  /** Stops waiting (the command carries on; read it later by id). */
  signal?: AbortSignal;
  /** Live output, when this node runs the command. */
  onOutput?: OutputSink;
  /**
   * The command's row as the caller has it (what `enqueue` returned): a terminal one
   * answers at once, and a queued one is not read back before the first poll.
   */
  row?: Command;
}

/** Default of {@link CommandQueueOptions.livenessMs}. */
export const DEFAULT_LIVENESS_MS = 10_000;
