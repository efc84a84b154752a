/**
 * The abort reason of a call whose caller went away without cancelling it: the HTTP
 * connection closed, or the mesh stream from the agent node that forwarded it broke.
 * Such a call is no longer waited for, but a command it queued belongs to the durable
 * queue and goes on; its outcome is read later by command id or by repeating the call
 * with its `callId`. Only an explicit cancel (a Cancel frame, the cancel routes, or a
 * caller that asked for cancel-on-disconnect) cancels a command.
 *
 * @module
 */

import { isNodeStopping } from './node-stopping.js';

/** The reason on a call's AbortSignal when its caller is gone. */
export class CallerGoneError extends Error {
  override readonly name = 'CallerGoneError';
  constructor(readonly why: string) {
    super(`the caller went away (${why})`);
  }
}

/** Whether an abort reason says the caller went away (not that it cancelled). */
export function isCallerGone(reason: unknown): reason is CallerGoneError {
  return reason instanceof CallerGoneError;
}

/**
 * Whether an abort only stops the wait for a call's answer, leaving a command it queued
 * to run: its caller went away, or its node stops. Any other abort is a cancel.
 */
export function abortDetaches(reason: unknown): boolean {
  return isCallerGone(reason) || isNodeStopping(reason);
}
