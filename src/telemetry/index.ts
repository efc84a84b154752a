/**
 * Telemetry: structured logs (pino, with a scoped child per component), Prometheus
 * metrics and their endpoint, and the state machine every lifecycle moves through
 * (one move at a time along the moves its machine declares, one log line per move).
 * It writes no rows: audit events are written by the parts whose moves they record.
 *
 * ```ts
 * const log = createLogger({ level: 'info' }).child({ component: 'sweeper' });
 * const metrics = createCommandMetrics();
 * const server = await startMetricsServer(metrics.registry, { host: '127.0.0.1', port: 9464 });
 * ```
 *
 * @packageDocumentation
 */
export { createLogger, type Logger } from './logger.js';
export {
  type CommandMetrics,
  createCommandMetrics,
  type LiveCommandCounts,
  startMetricsServer,
} from './metrics.js';
export { defineStateMachine, StateMachine } from './state-machine.js';
