/**
 * The TypeScript client of the agent node's HTTP API, for tool loops in Node.js, the
 * `memql` CLI and tests. The `workbenchHost` tool definition for LLM function calling
 * is re-exported here, so a tool loop needs only this module.
 *
 * ```ts
 * const client = new WorkbenchClient({ baseUrl: 'http://127.0.0.1:8080', token });
 * const run = await client.createRun();
 * const result = await client.dispatch({ action: 'exec', args: { command: 'ls' }, runId: run.runId, agentId, taskId });
 * ```
 *
 * @packageDocumentation
 */

export {
  type DispatchFailure,
  type DispatchResult,
  type EnvironmentHint,
  GOOS_VALUES,
  MAX_FILE_WRITE_BYTES,
  MAX_UPLOAD_BYTES,
  NEEDS,
  PROCESS_SIGNALS,
  type ProcessOutputPayload,
  type ProcessSignal,
  type ProcessStartPayload,
  type ProcessState,
  type ProcessView,
  type ProcessWritePayload,
  type ToolDefinition,
  type VersionDiffPayload,
  type VersionListPayload,
  type VersionRestorePayload,
  type VersionView,
  WORKBENCH_TOOL_NAME,
  workbenchToolDefinition,
} from '../contract/index.js';
export {
  type ArtifactBody,
  type DownloadResult,
  type ProgressListener,
  writeArtifact,
} from './artifact-download.js';
export {
  ClientError,
  type ClientErrorCode,
  codeForStatus,
  errorFromResponse,
  isAbortError,
  unreachableError,
} from './client-error.js';
export {
  type BuildRequest,
  type DispatchStreamOptions,
  type DownloadOptions,
  type FileCallOptions,
  fileQuery,
  type WorkbenchClientOptions,
  type WorkbenchHostFn,
} from './client-options.js';
export { checkedId, checkedPath, idSegment } from './id-checks.js';
export {
  isDispatchResult,
  NdjsonSplitter,
  type OutputStream,
  parseStreamEvent,
  readDispatchStream,
  type StreamEvent,
} from './ndjson-stream.js';
export {
  type FollowedOutput,
  type FollowOptions,
  ProcessClient,
  type ProcessStartRequest,
} from './process-client.js';
export {
  type ApproveAnswer,
  type ArtifactRecord,
  type CancelAnswer,
  type CancelEffect,
  type CommandEnding,
  type CommandPage,
  type CommandRecord,
  type CommandStatus,
  type CommandSummaryRecord,
  type ConsentCard,
  type ConsentRequestView,
  type ConsentStatus,
  type CreateRunOptions,
  type DeletedCounts,
  type DenyAnswer,
  type DispatchRequest,
  type EgressRefusal,
  type EndRunAnswer,
  type ExecPayload,
  type ExpectedOutputResult,
  type FilesRefused,
  type FleetBuildState,
  type FleetReplica,
  type FleetView,
  type FsDeletePayload,
  type FsListEntry,
  type FsListPayload,
  type FsReadPayload,
  type FsUploadPartPayload,
  type FsWritePayload,
  isScope,
  isTerminalRunStatus,
  isTokenKind,
  type KillSwitchAnswer,
  type ListCommandsOptions,
  type ListRunsOptions,
  type ListWorkspacesOptions,
  type MeAnswer,
  type OutputError,
  type PromotedArtifact,
  type PromotePayload,
  type RefusedPath,
  type ReleasedReason,
  type Run,
  type RunNetwork,
  type RunNetworkRequest,
  type RunPage,
  type RunStatus,
  type RunView,
  SCOPES,
  type Scope,
  type SetScopeAnswer,
  scopeCovers,
  TERMINAL_RUN_STATUSES,
  type TerminalRunStatus,
  TOKEN_KINDS,
  type TokenCreatedAnswer,
  type TokenKind,
  type TokenRecord,
  type TokenRevokedAnswer,
  type UploadProgress,
  type WorkerConsentView,
  type WorkerInvocationView,
  type WorkersAnswer,
  type WorkerView,
  type WorkspacePage,
  type WorkspaceRecord,
  type WorkspaceStatus,
} from './types.js';
export { type ForkAnswer, VersionClient, type VersionRef } from './version-client.js';
export { WorkbenchClient } from './workbench-client.js';
export { WorkerClient } from './worker-client.js';
