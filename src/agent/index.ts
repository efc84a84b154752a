/**
 * The agent: `dispatchHost` (the agent side of the dispatch pipeline: contract,
 * hint, build gate, route), its router over the mesh, and the wiring of an agent node.
 *
 * ```ts
 * const agent = await startAgentNode({ config, log, local: built.host, readAffinity, version });
 * const result = await agent.dispatcher.dispatchHost(rawEnvelope, authority);
 * ```
 *
 * @packageDocumentation
 */

export {
  type AgentNode,
  type AgentNodeDeps,
  startAgentNode,
  WORKBENCH_PEER_TYPE,
} from './agent-node.js';
export {
  AgentDispatcher,
  type AgentDispatcherOptions,
  type DispatchOutcome,
  PEER_WAIT_MS,
  type Route,
} from './dispatcher.js';
export { type NoPeerContext, noWorkbenchPeer } from './no-peer.js';
export { type PortOpener, type PortOpenerOptions, portOpener } from './port-opener.js';
export { registryRouter, type WorkbenchRouter } from './router.js';
export { RELEASE_WAIT_MS, releaseRunOnReplicas } from './run-release.js';
export type { WorkerCallStopper } from './worker-calls.js';
