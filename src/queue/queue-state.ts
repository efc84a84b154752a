/**
 * The lifecycle of a `CommandQueue`: `new -> running -> (draining ->) stopping ->
 * stopped`, or `new -> stopping -> stopped` for a queue stopped before it started.
 * Draining claims nothing new and lets running commands finish; stopping waits for
 * them (up to its grace period) and retires the worker. `stopped` is final.
 *
 * @module
 */

import { defineStateMachine } from '../telemetry/index.js';

/** Where a command queue is in its lifecycle. */
export type QueueState = 'new' | 'running' | 'draining' | 'stopping' | 'stopped';

/** A command queue's lifecycle: its moves, logged as `command-queue`. */
export const QUEUE_LIFECYCLE = defineStateMachine<QueueState>('command-queue', 'new', {
  new: ['running', 'stopping'],
  running: ['draining', 'stopping'],
  draining: ['stopping'],
  stopping: ['stopped'],
  stopped: [],
});
