/**
 * The agent: `dispatchHost` (the agent side of the dispatch pipeline: contract,
 * hint, build gate, route), its router over the mesh, and the wiring of an agent node.
 *
 * @packageDocumentation
 */

export * from './agent-node.js';
export * from './dispatcher.js';
export * from './no-peer.js';
export * from './port-opener.js';
export * from './router.js';
export * from './run-release.js';
export type { WorkerCallStopper } from './worker-calls.js';
