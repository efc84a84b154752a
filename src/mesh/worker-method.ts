/**
 * The method of a call an agent node sends down a worker host's stream: one
 * `workbenchHost` call rerouted to the user's own machine. Its payload is the dispatch
 * envelope as `envelopeToWire` writes it, its authority the calling user's
 * (`{class: 'user', subject: 'user:<id>'}`), and its answer a Response the agent reads
 * back with `resultFromResponse`, exec output streaming ahead of it as Output frames.
 *
 * @module
 */

/** The method of a call rerouted to a worker host. */
export const WORKER_DISPATCH_METHOD = 'worker.dispatch';
