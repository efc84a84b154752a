/**
 * A workbench node's egress, put together: the runs' network policies as the proxy
 * reads them, the node's proxy and trust bundle, the runs' package caches, the
 * `egress` of a command's result and the `workspace_egress.*` audit rows. The proxy
 * itself is the sandbox's (`sandbox/egress`).
 *
 * @module
 */

export {
  EGRESS_EVENT_TYPES,
  type EgressAttribution,
  EgressAudit,
  egressAuditMetadata,
} from './egress-audit.js';
export {
  RunEgressPolicies,
  type RunEgressPoliciesOptions,
  readRunEgressPolicy,
} from './run-egress-policy.js';
export { SYSTEM_CA_BUNDLE, type TrustBundleParts, writeTrustBundle } from './trust-bundle.js';
export {
  type CommandNetwork,
  type NetworkCommand,
  WorkbenchEgress,
  type WorkbenchEgressOptions,
} from './workbench-egress.js';
