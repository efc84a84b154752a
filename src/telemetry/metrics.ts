/**
 * Prometheus metrics of the command queue, on a registry owned by one node (never
 * prom-client's global default registry, so several nodes can live in one process).
 *
 * Series:
 * - `memql_workspace_command_queue_depth{state}`: commands `queued`, `running` and
 *   `cancelling` in the whole database (every node reports the same shared queue).
 * - `memql_workspace_command_queue_wait_seconds`: time from enqueue to claim.
 * - `memql_workspace_command_duration_seconds{status}`: time from claim to end.
 * - `memql_workspace_commands_queued_total`: commands this node queued.
 * - `memql_workspace_commands_terminal_total{status,error_category}`: commands this
 *   node saw end (ran, cancelled while queued, or recovered).
 *
 * @module
 */

import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export { type MetricsServer, startMetricsServer } from './metrics-server.js';

/** Live command counts, as `countLiveCommands` returns them. */
export interface LiveCommandCounts {
  queued: number;
  running: number;
  cancelling: number;
}

/** Options of {@link createCommandMetrics}. */
export interface CommandMetricsOptions {
  /** The registry to register on. Default: a new one, owned by these metrics. */
  registry?: Registry;
  /**
   * Reads the live counts at scrape time, so the depth gauge is current even when no
   * command moved lately. Without it the gauge shows the counts the queue's telemetry
   * last read (about once a second while commands move).
   */
  liveCounts?: () => Promise<LiveCommandCounts>;
}

/** What the queue reports; {@link createCommandMetrics} makes one. */
export interface CommandMetrics {
  /** The registry the series live on (serve it with {@link startMetricsServer}). */
  readonly registry: Registry;
  /** A command was queued (not a callId replay). */
  queued(): void;
  /** A worker claimed a command after it waited `waitMs`. */
  started(waitMs: number): void;
  /**
   * A command ended. `durationMs` is null when it never started (cancelled while
   * queued); such a command is counted but not timed.
   */
  ended(status: string, errorCategory: string | null, durationMs: number | null): void;
  /** Sets the depth gauge. */
  setLiveCounts(counts: LiveCommandCounts): void;
}

/** Buckets from 10 ms to an hour: queue waits and runs both span that range. */
const SECONDS_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

/** Registers the queue's series on a registry and returns the recorder. */
export function createCommandMetrics(options: CommandMetricsOptions = {}): CommandMetrics {
  const registry = options.registry ?? new Registry();
  const liveCounts = options.liveCounts;
  const depth = new Gauge({
    name: 'memql_workspace_command_queue_depth',
    help: 'Commands queued, running, and running with a cancel requested, across all nodes.',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      if (!liveCounts) return;
      try {
        setDepth(await liveCounts());
      } catch {
        // A failed read keeps the last counts; the scrape itself must not fail.
      }
    },
  });
  const setDepth = (c: LiveCommandCounts) => {
    depth.set({ state: 'queued' }, c.queued);
    depth.set({ state: 'running' }, c.running);
    depth.set({ state: 'cancelling' }, c.cancelling);
  };
  setDepth({ queued: 0, running: 0, cancelling: 0 });
  const wait = new Histogram({
    name: 'memql_workspace_command_queue_wait_seconds',
    help: 'Time a command waited in the queue before a worker claimed it.',
    buckets: SECONDS_BUCKETS,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'memql_workspace_command_duration_seconds',
    help: 'Time from claim to terminal status, by terminal status.',
    labelNames: ['status'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [registry],
  });
  const queued = new Counter({
    name: 'memql_workspace_commands_queued_total',
    help: 'Commands queued through this node (callId replays excluded).',
    registers: [registry],
  });
  const terminal = new Counter({
    name: 'memql_workspace_commands_terminal_total',
    help: 'Commands that reached a terminal status on this node, by status and error category.',
    labelNames: ['status', 'error_category'] as const,
    registers: [registry],
  });
  return {
    registry,
    queued: () => queued.inc(),
    started: (waitMs) => wait.observe(Math.max(0, waitMs) / 1000),
    ended(status, errorCategory, durationMs) {
      terminal.inc({ status, error_category: errorCategory ?? 'none' });
      if (durationMs !== null) duration.observe({ status }, Math.max(0, durationMs) / 1000);
    },
    setLiveCounts: setDepth,
  };
}
