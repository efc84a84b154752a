/**
 * The shapes the HTTP API answers with, as the client sees them.
 *
 * These mirror the API's JSON; the contract module defines the dispatch envelope and
 * result, so only the REST resources (runs, commands, workspaces, artifacts, fleet)
 * are described here. Timestamps are ISO 8601 strings, as JSON carries them.
 *
 * @module
 */

import type {
  ActionArgsInput,
  CommandEnding,
  CommandStatus,
  ExpectedOutputResult,
  PromotedArtifact,
  RefusedPath,
  RunNetwork,
  RunNetworkRequest,
  RunStatus,
  TokenKind,
  ToolActionName,
  WorkerView,
} from '../contract/index.js';

export {
  type ApproveAnswer,
  type CommandEnding,
  type CommandStatus,
  type ConsentCard,
  type ConsentRequestView,
  type ConsentStatus,
  type DenyAnswer,
  type EgressRefusal,
  type ExecPayload,
  type ExpectedOutputResult,
  type FilesRefused,
  isScope,
  isTerminalRunStatus,
  isTokenKind,
  type KillSwitchAnswer,
  type OutputError,
  type PromotedArtifact,
  type RefusedPath,
  type RunNetwork,
  type RunNetworkRequest,
  type RunStatus,
  SCOPES,
  type Scope,
  type SetScopeAnswer,
  scopeCovers,
  TERMINAL_RUN_STATUSES,
  type TerminalRunStatus,
  TOKEN_KINDS,
  type TokenKind,
  type WorkerConsentView,
  type WorkerInvocationView,
  type WorkersAnswer,
  type WorkerView,
} from '../contract/index.js';

/** A run, owned by the user whose token created it. */
export interface Run {
  /** The run id: the workspace's name and the `runId` of every dispatch. */
  readonly id: string;
  /** `running` until the run is ended, then one of {@link TerminalRunStatus}. */
  readonly status: string;
  /** The user who created the run (from the token, never from the request body). */
  readonly ownerUserId: string;
  /** The caller's conversation id, when given at creation. */
  readonly conversationId: string | null;
  /** Creation time. */
  readonly createdAt: string;
  /** When the run reached its terminal status; null while it runs. */
  readonly endedAt: string | null;
  /** When the run's data is due for deletion; null when kept until deleted. */
  readonly retentionExpiresAt: string | null;
  /** What its commands may reach: host rules and secret names; `allow: []` is no network. */
  readonly network: RunNetwork;
}

/** What `listRuns` may select. */
export interface ListRunsOptions {
  /** Only runs in this status. */
  readonly status?: RunStatus;
  /** Runs per page, 1 to 500; the server's default is 50. */
  readonly limit?: number;
  /** Only runs older than this one: the `nextBefore` of the previous page. */
  readonly before?: string;
}

/** One page of the caller's runs, newest first. */
export interface RunPage {
  readonly runs: readonly Run[];
  /** Pass as `before` for the next (older) page; null on the last page. */
  readonly nextBefore: string | null;
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

/** What deleting a run removed, counted by kind. */
export interface DeletedCounts {
  readonly objects: number;
  readonly commands: number;
  readonly workspaces: number;
  readonly artifacts: number;
}

/**
 * The payload of a successful `promote_artifact` dispatch; also each promoted expected
 * output of an `exec` (`ExecPayload.outputs[].artifact`).
 */
export type PromotePayload = PromotedArtifact;

/** The payload of a successful `fs_read` dispatch. */
export interface FsReadPayload {
  readonly path: string;
  /**
   * How `content` is encoded: as asked, except that a `utf8` read of bytes that are not
   * UTF-8 answers `base64` (with `binary: true`) instead of replacement characters.
   */
  readonly encoding: 'utf8' | 'base64';
  /** True when `utf8` was asked for and the bytes were not UTF-8, so they came as base64. */
  readonly binary?: true;
  readonly content: string;
  readonly offset: number;
  readonly bytesRead: number;
  /** The whole file's size in bytes. */
  readonly size: number;
  /** Whether this read reached the end of the file. */
  readonly eof: boolean;
}

/** The payload of a successful `fs_write` dispatch. */
export interface FsWritePayload {
  readonly path: string;
  readonly bytesWritten: number;
  readonly size: number;
  /**
   * On an upload's parts: its id, the bytes staged so far, whether it is placed, and
   * `aborted: true` on the answer to a part that gave it up.
   */
  readonly upload?: {
    readonly id: string;
    readonly staged: number;
    readonly complete: boolean;
    readonly aborted?: boolean;
  };
}

/** One entry of an `fs_list` answer. */
export interface FsListEntry {
  readonly path: string;
  readonly type: 'file' | 'directory' | 'symlink' | 'other';
  readonly size: number;
  readonly mtimeMs: number;
}

/** The payload of a successful `fs_list` dispatch. */
export interface FsListPayload {
  readonly path: string;
  readonly entries: readonly FsListEntry[];
  /** Whether more entries exist than were returned. */
  readonly truncated: boolean;
  /** Entries too deep to describe (host path over PATH_MAX); present only when some are. */
  readonly refused?: readonly RefusedPath[];
}

/** A command as a run's command list shows it: how it ended, without its output. */
export interface CommandSummaryRecord extends CommandEnding {
  readonly id: string;
  readonly runId: string;
  /** The `callId` of the dispatch that queued it, when one was sent. */
  readonly callId: string | null;
  /** Why the command failed, when it did (a contract error code). */
  readonly errorCode: string | null;
  readonly errorCategory: string | null;
  /** Its time limit, in milliseconds. */
  readonly timeoutMs: number;
  /** How many times a worker claimed it. */
  readonly attempts: number;
  readonly queuedAt: string;
  readonly startedAt: string | null;
  readonly finishedAt: string | null;
}

/** A command row, read by id: the list's fields and the output. */
export interface CommandRecord extends CommandSummaryRecord {
  /** UTF-8 text, or base64 when `stdoutEncoding` is `base64` (output that is not text). */
  readonly stdout: string;
  /** UTF-8 text, or base64 when `stderrEncoding` is `base64`. */
  readonly stderr: string;
  readonly stdoutEncoding?: 'base64';
  readonly stderrEncoding?: 'base64';
  /**
   * What became of the expected outputs the `exec` named, once it ended: per output,
   * its artifact or why there is none (`command_failed` when the command did not
   * succeed). Absent when it named none.
   */
  readonly outputs?: readonly ExpectedOutputResult[];
}

/** What a cancel did: the command as it stands after, and the move it made. */
export interface CancelAnswer {
  readonly command: CommandRecord;
  /** `cancelled`: it was queued and never runs; `cancelling`: its worker kills it; `ended`: it had ended. */
  readonly effect: 'cancelled' | 'cancelling' | 'ended';
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

/** One page of a run's commands, newest first. */
export interface CommandPage {
  readonly commands: readonly CommandSummaryRecord[];
  /** Pass as `before` for the next (older) page; null on the last page. */
  readonly nextBefore: string | null;
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

/** One page of the caller's workspaces, newest first. */
export interface WorkspacePage {
  readonly workspaces: readonly WorkspaceRecord[];
  /** Pass as `before` for the next (older) page; null on the last page. */
  readonly nextBefore: string | null;
}

/** A workspace row of one of the caller's runs. */
export interface WorkspaceRecord {
  readonly id: string;
  readonly runId: string;
  /** The replica that holds (or held) it. */
  readonly nodeId: string;
  /** `provisioned`, `released` or `deleted`. */
  readonly status: string;
  /** Why it was released, such as `run_ended` or `node_lost`. */
  readonly releasedReason: string | null;
  readonly createdAt: string;
  readonly releasedAt: string | null;
}

/** A promoted artifact. */
export interface ArtifactRecord {
  readonly id: string;
  readonly runId: string;
  readonly name: string;
  readonly contentType: string;
  /** Bytes. */
  readonly size: number;
  /** Hex SHA-256 of the bytes. */
  readonly sha256: string;
  readonly createdAt: string;
}

/** The workbench fleet as the agent node sees it. */
export interface FleetView {
  /** One entry per workbench replica; the fields are the API's. */
  readonly replicas: readonly Record<string, unknown>[];
  /** The caller's own worker hosts, as {@link WorkbenchClient.listWorkers} lists them. */
  readonly workers: readonly WorkerView[];
  /** How this agent node dispatches (in-process or remote). */
  readonly mode: string;
}

/**
 * A dispatch envelope as a caller writes it: `args` is the action's input shape,
 * defaults optional. The server validates it again; this type only helps callers.
 */
export interface DispatchRequest {
  /** The action (system-only actions are refused by the server). */
  readonly action: ToolActionName | (string & {});
  /** The action's arguments. */
  readonly args: ActionArgsInput<ToolActionName> | Record<string, unknown>;
  readonly runId: string;
  readonly agentId: string;
  readonly taskId: string;
  readonly callId?: string;
  /** The environment hint, `{ os?, needs? }`. */
  readonly environment?: unknown;
}

/** A user's API token as an operator sees it: never its secret. */
export interface TokenRecord {
  readonly id: string;
  readonly userId: string;
  /** `agent` (a tool loop's) or `person` (the user's own sign-in). */
  readonly kind: TokenKind;
  readonly label: string | null;
  readonly createdAt: string;
  readonly revokedAt: string | null;
}

/** `GET /v1/me`: who the token speaks for. */
export interface MeAnswer {
  readonly userId: string;
  readonly tokenKind: TokenKind;
}
