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
 * ```ts
 * const parsed = parseEnvelope(body);
 * if (!parsed.ok) return parsed; // invalid_arguments, with what to fix
 * const refusal = admitEnvelope(parsed.envelope, authority); // hint, then authority
 * ```
 *
 * @packageDocumentation
 */

export { renderActionReference } from './action-reference.js';
export {
  ACTION_NAMES,
  ACTION_SCHEMAS,
  type ActionArgs,
  type ActionArgsInput,
  type ActionName,
  buildArgsSchema,
  DEFAULT_LIST_LIMIT,
  ENV_NAME_PATTERN,
  type ExecRequest,
  type ExpectedOutput,
  execArgsSchema,
  execRequestOf,
  execRequestSchema,
  expectedOutputSchema,
  fetchArgsSchema,
  fsDeleteArgsSchema,
  fsListArgsSchema,
  fsReadArgsSchema,
  fsWriteArgsSchema,
  isActionName,
  isMutatingAction,
  isToolActionName,
  MAX_ARTIFACT_NAME_CHARS,
  MAX_COMMAND_CHARS,
  MAX_ENV_ENTRIES,
  MAX_ENV_VALUE_CHARS,
  MAX_EXPECTED_OUTPUTS,
  MAX_FILE_WRITE_BYTES,
  MAX_LIST_LIMIT,
  MAX_PATH_CHARS,
  MAX_PAYLOAD_CHARS,
  MAX_TIMEOUT_MS,
  MAX_UPLOAD_BYTES,
  MAX_URL_CHARS,
  PAYLOAD_ARG_FIELDS,
  parseExecRequest,
  promoteArtifactArgsSchema,
  SYSTEM_ONLY_ACTIONS,
  type SystemOnlyActionName,
  TOOL_ACTION_NAMES,
  type ToolActionName,
  UPLOAD_ID_PATTERN,
} from './actions.js';
export type { AddressCategory, AddressClass, EmbeddingForm } from './address-class.js';
export { classifyAddress } from './address-class.js';
export type { AddressVerdict } from './address-policy.js';
export { evaluateAddress } from './address-policy.js';
export { admitEnvelope } from './admission.js';
export {
  type Authority,
  type AuthorityClass,
  checkActionAuthority,
  isSystemAuthority,
  isUserSubject,
  MAX_SUBJECT_CHARS,
  SYSTEM_SUBJECT_PREFIX,
  systemAuthority,
  USER_SUBJECT_PREFIX,
  userAuthority,
} from './authority.js';
export {
  BUILD_TOOLS,
  type BuildTool,
  type BuildUnavailablePayload,
  buildUnavailable,
  canBuild,
  DEFAULT_BUILD_SCRIPT,
  isBuildTool,
  type ReplicaBuildState,
  replicaBuildState,
  type Toolchain,
  type ToolchainProblem,
} from './build-toolchain.js';
export { callDigest, canonicalJson } from './call-digest.js';
export { abortDetaches, CallerGoneError, isCallerGone } from './caller-gone.js';
export type { CidrRange, ParsedCidr } from './cidr-range.js';
export { cidr, cidrContains, parseCidr } from './cidr-range.js';
export {
  allowingRule,
  type EgressPolicy,
  formatHostRule,
  type HostRule,
  MAX_HOST_RULES,
  NO_EGRESS,
  normalizeHostName,
  parseHostRule,
  ruleCovers,
  ruleMatches,
  withinCeiling,
} from './egress-policy.js';
export { type EndingAnswer, endingAnswer, outputText } from './ending-answer.js';
export {
  type DispatchRequest,
  type Envelope,
  type EnvelopeBase,
  type EnvelopeFor,
  type EnvelopeParseResult,
  envelopeToWire,
  type InvalidArgumentsPayload,
  MAX_ID_CHARS,
  parseEnvelope,
} from './envelope.js';
export {
  type EnvironmentEvaluation,
  type EnvironmentHint,
  type EnvironmentHintParse,
  type EnvironmentMismatchPayload,
  type EnvironmentProvides,
  environmentFailure,
  environmentHintSchema,
  environmentMismatchFromPayload,
  environmentMismatchPayload,
  evaluateEnvironment,
  GOOS_VALUES,
  type GoOs,
  goosFromNodePlatform,
  type InvalidEnvironmentHint,
  MAX_HINT_NEEDS,
  NEEDS,
  type Need,
  parseEnvironmentHint,
  UNMET_NEED_VALUES,
  type UnmetNeed,
  WORKBENCH_OS,
  WORKBENCH_PROVIDES,
} from './environment.js';
export { renderErrorReference } from './error-reference.js';
export {
  codeForHttpStatus,
  DependencyError,
  ERROR_CODE_LIST,
  ERROR_CODES,
  type ErrorCategory,
  type ErrorCode,
  type ErrorCodeInfo,
  errorCategory,
  httpStatusOf,
  isErrorCode,
  isRetryable,
  WorkbenchError,
} from './errors.js';
export { EXEC_PROGRAMS_SUMMARY, EXEC_SUMMARY_PROGRAMS } from './exec-programs.js';
export { errorFromResult, resultFromError, workbenchErrorOf } from './failure-converter.js';
export type { FieldProblem } from './field-problems.js';
export type {
  FsDeletePayload,
  FsListEntry,
  FsListPayload,
  FsReadPayload,
  FsUploadPartPayload,
  FsWritePayload,
  PromotePayload,
  UploadProgress,
} from './file-payloads.js';
export type {
  FleetBuildState,
  FleetReplica,
  FleetView,
  ReplicaFleet,
} from './fleet-view.js';
export type { IpAddress, ParsedHost } from './ip-address.js';
export {
  formatAddress,
  parseHostAddress,
  parseIPv4Strict,
  parseIPv6,
  parseIpAddress,
} from './ip-address.js';
export {
  isNodeStopping,
  NODE_DRAINING,
  NodeStoppingError,
  refusedBeforeRunning,
  WORKSPACE_MOVED,
} from './node-stopping.js';
export {
  DEFAULT_PROCESS_READ_BYTES,
  DEFAULT_PROCESS_WAIT_MS,
  MAX_PROCESS_LIST,
  MAX_PROCESS_READ_BYTES,
  MAX_PROCESS_WAIT_MS,
  MAX_PTY_SIZE,
  PROCESS_ID_PATTERN,
  PROCESS_SIGNALS,
  type ProcessErrorCode,
  type ProcessOutputPayload,
  type ProcessSignal,
  type ProcessStartPayload,
  type ProcessState,
  type ProcessView,
  type ProcessWritePayload,
  processListArgsSchema,
  processOutputArgsSchema,
  processResizeArgsSchema,
  processShellArgsSchema,
  processSignalArgsSchema,
  processStartArgsSchema,
  processWaitArgsSchema,
  processWriteArgsSchema,
} from './process-actions.js';
export type {
  ArtifactRecord,
  CancelAnswer,
  CancelEffect,
  CommandPage,
  CommandRecord,
  CommandSummaryRecord,
  DeletedCounts,
  EndRunAnswer,
  ForkAnswer,
  MeAnswer,
  OwnTokenRecord,
  ReleasedReason,
  RunPage,
  RunView,
  TokenCreatedAnswer,
  TokenRecord,
  TokenRevokedAnswer,
  WorkspacePage,
  WorkspaceRecord,
  WorkspaceStatus,
} from './resource-views.js';
export {
  type DispatchFailure,
  type DispatchResult,
  type DispatchStreamLine,
  type DispatchSuccess,
  errorResult,
  INTERNAL_ERROR_MESSAGE,
  okResult,
  type WorkerRouting,
} from './result.js';
export { checkRunId, isRunId, MAX_RUN_ID_CHARS } from './run-id.js';
export {
  checkRunNetwork,
  type EgressBounds,
  type EgressRefusal,
  effectivePolicy,
  MAX_RUN_SECRETS,
  NO_RUN_NETWORK,
  type ParsedRunNetwork,
  parseRunNetwork,
  type RunNetwork,
  type RunNetworkProblem,
  type RunNetworkRequest,
  SECRET_NAME_PATTERN,
} from './run-network.js';
export { higherScope, isScope, SCOPES, type Scope, scopeCovers } from './scope.js';
export { isTokenKind, TOKEN_KINDS, type TokenKind } from './token-kind.js';
export {
  actionArgsJsonSchema,
  environmentHintJsonSchema,
  type JsonSchema,
  type ToolDefinition,
  WORKBENCH_TOOL_NAME,
  workbenchToolDefinition,
} from './tool-definition.js';
export {
  DEFAULT_DIFF_ENTRIES,
  DEFAULT_VERSION_LIST,
  type DiffEntry,
  type DiffSide,
  MAX_DIFF_ENTRIES,
  MAX_VERSION_LABEL_CHARS,
  MAX_VERSION_LIST,
  VERSION_LABEL_PATTERN,
  type VersionDiffPayload,
  type VersionListPayload,
  type VersionRestorePayload,
  type VersionSource,
  type VersionView,
  versionCheckpointArgsSchema,
  versionDiffArgsSchema,
  versionLabel,
  versionListArgsSchema,
  versionRestoreArgsSchema,
} from './version-actions.js';
export {
  type CommandEgress,
  type CommandEnding,
  type CommandRunResult,
  type CommandStatus,
  type ExecPayload,
  type ExpectedOutputResult,
  type FilesRefused,
  isTerminalRunStatus,
  MAX_EGRESS_REFUSALS,
  type OutputError,
  type OutputSink,
  type OutputStream,
  type PromotedArtifact,
  type RefusedDestination,
  type RefusedPath,
  type RunStatus,
  TERMINAL_RUN_STATUSES,
  type TerminalRunStatus,
} from './wire-shapes.js';
export {
  actionScope,
  type ConsentCard,
  type ConsentStatus,
  isWorkerAction,
  offeredNeeds,
  READING_WORKER_ACTIONS,
  REROUTED_FROM,
  WORKER_ACTIONS,
  type WorkerActionName,
  type WorkerLack,
  type WorkerOffer,
} from './worker-consent.js';
export type {
  ApproveAnswer,
  ConsentRequestView,
  DenyAnswer,
  KillSwitchAnswer,
  SetScopeAnswer,
  WorkerConsentView,
  WorkerInvocationView,
  WorkersAnswer,
  WorkerView,
} from './worker-views.js';
