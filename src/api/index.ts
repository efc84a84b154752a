/**
 * The HTTP API for tool loops and the operator console page, served by agent nodes
 * (and by the local node, which is an agent and a workbench in one process).
 *
 * ```ts
 * const server = await startApiServer(deps, { host: '127.0.0.1', port: 8080 });
 * ```
 *
 * @packageDocumentation
 */

export type {
  ApiDeps,
  ApiDispatcher,
  RouteContext,
  RouteHandler,
} from './api-deps.js';
export { type ApiServer, createApiHandler, matchRoute, startApiServer } from './api-server.js';
export {
  authenticate,
  bearerToken,
  type Caller,
  decidedBy,
  type PersonDecision,
  requirePerson,
} from './auth.js';
export {
  DEV_TOKEN_FILE,
  DEV_USER_ID,
  type DevToken,
  ensureDevToken,
  ensureOperatorToken,
  ensurePersonToken,
  OPERATOR_TOKEN_FILE,
  PERSON_TOKEN_FILE,
} from './dev-token.js';
export {
  type FleetBuildState,
  type FleetReplica,
  type FleetSource,
  fleetBuildState,
  type LocalFleetDeps,
  localFleet,
  type ReplicaFleet,
  remoteFleet,
} from './fleet.js';
export {
  createReadinessProbe,
  type DatabaseProbe,
  decideReadiness,
  type FleetProbe,
  probeDatabase,
  probeFleet,
  READINESS_TIMEOUT_MS,
  type Readiness,
  type ReadinessCheck,
  type ReadinessDeps,
  type ReadinessInput,
} from './readiness.js';
export { describeReleaseReason, RELEASE_REASON_TEXT } from './release-reasons.js';
export {
  callerWorkers,
  isCallerWorker,
  type LiveWorker,
  type WorkerDirectory,
} from './worker-directory.js';
