/**
 * The methods of worker-host calls on the mesh.
 *
 * `worker.dispatch` is what an agent node sends down a worker host's stream: one
 * `workbenchHost` call rerouted to the user's own machine. Its payload is the dispatch
 * envelope as `envelopeToWire` writes it, its authority the calling user's
 * (`{class: 'user', subject: 'user:<id>'}`), and its answer a Response the agent reads
 * back with `resultFromResponse`, exec output streaming ahead of it as Output frames.
 *
 * `worker.forward` is what an agent replica sends a peer replica that holds the
 * worker's stream, once its own consent gate let the call run: the same call, for the
 * peer to pass down that stream as it is (`{workerId, payload}` in JSON, `payload`
 * the `worker.dispatch` payload in base64), with the same authority. The peer serves
 * it only on a stream that presented the mesh token, and evaluates no gate of its own.
 *
 * @module
 */

/** The method of a call rerouted to a worker host. */
export const WORKER_DISPATCH_METHOD = 'worker.dispatch';

/** The method of a worker call forwarded to the agent replica holding the worker's stream. */
export const WORKER_FORWARD_METHOD = 'worker.forward';
