/**
 * The shapes the HTTP API answers with, as the client sees them: re-exported from the
 * contract, where the API's view builders take them from, so the two cannot drift
 * (`test/architecture/client-shapes.test.ts` fails on a shape restated here), as is
 * the dispatch request. Only the options of the client's own list and create calls
 * are defined here. Timestamps are ISO 8601 strings, as JSON carries them.
 *
 * @module
 */

import type { CommandStatus, RunNetworkRequest, RunStatus } from '../contract/index.js';

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
  type ForkAnswer,
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
  type MeAnswer,
  type OutputError,
  type PromotedArtifact,
  type PromotePayload,
  type RefusedPath,
  type ReleasedReason,
  type RunNetwork,
  type RunNetworkRequest,
  type RunPage,
  type RunStatus,
  /** A run, owned by the user whose token created it (the contract's `RunView`). */
  type RunView as Run,
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
} from '../contract/index.js';

/** What `listRuns` may select. */
export interface ListRunsOptions {
  /** Only runs in this status. */
  readonly status?: RunStatus;
  /** Runs per page, 1 to 500; the server's default is 50. */
  readonly limit?: number;
  /** Only runs older than this one: the `nextBefore` of the previous page. */
  readonly before?: string;
}

/** What `createRun` may set. */
export interface CreateRunOptions {
  /** The caller's conversation id, recorded on the run. */
  readonly conversationId?: string;
  /** How long the run's data is kept after creation, in milliseconds. */
  readonly retentionMs?: number;
  /**
   * Hosts its commands may reach (within the operator's ceiling) and secrets it opts
   * into; default none. Outside the ceiling: `egress_not_allowed`, and no run is made.
   */
  readonly network?: RunNetworkRequest;
}

/** What `listCommands` may select. */
export interface ListCommandsOptions {
  /** Only commands in this status. */
  readonly status?: CommandStatus;
  /** Commands per page, 1 to 500; the server's default is 50. */
  readonly limit?: number;
  /** Only commands older than this one: the `nextBefore` of the previous page. */
  readonly before?: string;
}

/** What `listWorkspacePage` may select. */
export interface ListWorkspacesOptions {
  /** Released workspaces too, not only live ones. */
  readonly includeReleased?: boolean;
  /** Workspaces per page, 1 to 500; the server's default is 200. */
  readonly limit?: number;
  /** Only workspaces older than this one: the `nextBefore` of the previous page. */
  readonly before?: string;
}
