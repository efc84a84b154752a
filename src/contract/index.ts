/**
 * The contract between tool loops, agent nodes and workbench nodes: the actions and
 * their arguments, the dispatch envelope and result, the error codes, the environment
 * hint and authority; and the IP address vocabulary the parts share (addresses, CIDR
 * ranges, what kind of address one is, and whether the node may connect to one),
 * which config parses settings with and fetch and the egress proxy decide with. Pure: no I/O, no configuration, no imports from other
 * parts. Both node types import it, and nothing else defines these things.
 *
 * ## Glossary
 *
 * - **Run**: one execution of an agent's plan, identified by a `runId`. A run ends in
 *   one of four terminal statuses (`succeeded`, `failed`, `cancelled`, `abandoned`);
 *   reaching one releases the run's workspace.
 * - **Workspace**: the run's directory tree, `$MEMQL_WORKBENCH_ROOT/<runId>/`, plain
 *   files that every call of the run sees. It lives on one replica at a time, with a
 *   durable copy (manifest rows plus object-store bytes) so it survives that replica.
 * - **Replica**: one running workbench node, named by its `MEMQL_NODE_ID`. A
 *   deployment runs several behind one service name.
 * - **Affinity**: the rule that a run's calls go to the replica holding its workspace.
 *   The workspace row records that replica; the agent prefers it while it is healthy
 *   and picks a substitute, which takes the workspace over, only when it is not.
 * - **Promotion**: handing a workspace file to the end user as an artifact
 *   (`promote_artifact`, or an expected output an `exec` names, promoted when its
 *   command succeeds). End users only ever receive promoted artifacts, never the
 *   workspace itself.
 * - **Authority**: on whose behalf a call runs: `user` for tool-loop calls, `system`
 *   for the platform's own pipelines. Only a system authority may call `build`, and
 *   only trusted node code can make one.
 * - **Environment hint**: an optional `{ os?, needs? }` on a call saying what the action
 *   needs. A workbench that cannot provide it answers `environment_mismatch` before
 *   anything runs; a malformed hint answers `invalid_environment_hint`.
 * - **Command**: one `exec` call's unit of work. It waits in a durable queue for a
 *   runner slot and moves `queued -> running -> completed | failed | timed_out |
 *   cancelled`; those statuses describe how a command ended, not why a call failed.
 *
 * @packageDocumentation
 */

export * from './action-reference.js';
export * from './actions.js';
export type { AddressCategory, AddressClass, EmbeddingForm } from './address-class.js';
export { classifyAddress } from './address-class.js';
export type { AddressVerdict } from './address-policy.js';
export { evaluateAddress } from './address-policy.js';
export * from './admission.js';
export * from './authority.js';
export * from './build-toolchain.js';
export * from './call-digest.js';
export * from './caller-gone.js';
export type { CidrRange, ParsedCidr } from './cidr-range.js';
export { cidr, cidrContains, parseCidr } from './cidr-range.js';
export * from './egress-policy.js';
export * from './envelope.js';
export * from './environment.js';
export * from './errors.js';
export * from './exec-programs.js';
export type { FieldProblem } from './field-problems.js';
export type { IpAddress, ParsedHost } from './ip-address.js';
export {
  formatAddress,
  parseHostAddress,
  parseIPv4Strict,
  parseIPv6,
  parseIpAddress,
} from './ip-address.js';
export * from './node-stopping.js';
export * from './process-actions.js';
export * from './result.js';
export * from './run-id.js';
export * from './run-network.js';
export * from './scope.js';
export * from './token-kind.js';
export * from './tool-definition.js';
export * from './version-actions.js';
export * from './wire-shapes.js';
export * from './worker-consent.js';
export * from './worker-views.js';
