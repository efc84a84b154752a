/**
 * The durable command queue: enqueue, claim, lease, heartbeat, cancel, stale recovery
 * and the per-node worker. See {@link CommandQueue}.
 */
export * from './command-outcome.js';
export * from './command-queue.js';
export * from './command-waiters.js';
export * from './error-summary.js';
export type * from './execution.js';
export * from './queue-state.js';
export * from './recovery-rule.js';
export { ABORT_WAIT_MS, CommandAbortError } from './run-execution.js';
export { WakeUps } from './wake-ups.js';
export { within } from './within.js';
