/**
 * The worker host: a binary on a user's own machine that dials out to an agent node,
 * declares what it offers (its OS and the needs that hold there), and serves the file
 * actions and `exec` against a root directory its user chose, with its own limits.
 * Consent is decided on the agent, before a call is sent; the worker checks again what
 * it can check itself (the action, the authority's class, the hint against its offer).
 *
 * @packageDocumentation
 */

export * from './call-slots.js';
export * from './command-env.js';
export * from './worker-actions.js';
export * from './worker-exec.js';
export * from './worker-handler.js';
export * from './worker-link.js';
export * from './worker-node.js';
export * from './worker-offer.js';
export * from './worker-root.js';
