/**
 * The durable command queue: enqueue, claim, lease, heartbeat, cancel, stale recovery
 * and the per-node worker. See {@link CommandQueue}.
 *
 * ```ts
 * const queue = new CommandQueue({ db, nodeId, concurrency: 4, leaseMs, pollIntervalMs, execute, log });
 * queue.start();
 * ```
 *
 * @packageDocumentation
 */
export { commandAnswer, expectedOutputs } from './command-answer.js';
export {
  type AbortReason,
  decideOutcome,
  type ExecutionEnd,
  FILES_NOT_SAVED,
  failureCode,
  isTerminal,
  MAX_CLAIMS,
  shouldRequeue,
  TIMEOUT_CATEGORIES,
  type TimeoutCategory,
} from './command-outcome.js';
export {
  type Clock,
  CommandQueue,
  type CommandQueueOptions,
  DEFAULT_LIVENESS_MS,
  type EnqueueCall,
  type WaitOptions,
} from './command-queue.js';
export { CommandWaiters, type PendingOutcome, pendingOutcomeError } from './command-waiters.js';
export { type ErrorSummary, requestStrings, summarizeError } from './error-summary.js';
export type {
  ExecuteCommand,
  ExecuteContext,
  ExecutionResult,
  FilesNotSaved,
  OutputStream,
} from './execution.js';
export { QUEUE_LIFECYCLE, type QueueState } from './queue-state.js';
export {
  decideRecovery,
  type LivenessRule,
  type LostEvidence,
  livenessRule,
  RECONNECT_SLACK_MS,
  type RecoveryFacts,
  type RecoveryVerdict,
  recoveryBoundMs,
  recoveryPeriodMs,
} from './recovery-rule.js';
export {
  RETENTION_BATCH_ROWS,
  RETENTION_MAX_BATCHES,
  type RetentionReport,
  sweepRetention,
} from './retention-sweep.js';
export { ABORT_WAIT_MS, CommandAbortError } from './run-execution.js';
export { WakeUps } from './wake-ups.js';
export { within } from './within.js';
