/**
 * The worker host: a binary on a user's own machine that dials out to an agent node,
 * declares what it offers (its OS and the needs that hold there), and serves the file
 * actions and `exec` against a root directory its user chose, with its own limits.
 * Consent is decided on the agent, before a call is sent; the worker checks again what
 * it can check itself (the action, the authority's class, the hint against its offer).
 *
 * ```ts
 * const node = startWorkerNode({ nodeId, version, agent, token, root, provides, capacity, platform, sessionEnv, exec, log });
 * await node.stop(graceMs);
 * ```
 *
 * @packageDocumentation
 */

export { CallSlots, SlotWaitAborted } from './call-slots.js';
export { commandBaseEnv, DISPLAY_VARIABLES, SESSION_VARIABLES } from './command-env.js';
export { refuseAction, serveWorkerCall, type WorkerActionDeps } from './worker-actions.js';
export {
  execTimeoutMs,
  neverRanPayload,
  type WorkerExecDeps,
  type WorkerExecLimits,
  type WorkerExecPayload,
  workerExec,
  workerExecPayload,
} from './worker-exec.js';
export { createWorkerHandler, type WorkerHandlerDeps } from './worker-handler.js';
export {
  type LinkStopOutcome,
  refusedTokenMessage,
  WORKER_LINK_LIFECYCLE,
  WorkerLink,
  type WorkerLinkOptions,
  type WorkerLinkState,
} from './worker-link.js';
export { startWorkerNode, type WorkerNode, type WorkerNodeOptions } from './worker-node.js';
export {
  detectProvides,
  type OfferProbe,
  providesTable,
  waylandSocketPath,
  workerOffer,
  x11SocketPath,
} from './worker-offer.js';
export { workerRootProblem } from './worker-root.js';
