/**
 * The REST resources as JSON on the HTTP API: runs, commands, workspaces, artifacts,
 * tokens, and the answers that carry them. The API builds its answers with these types
 * and the client reads them; they are defined here once, so a field the server changes
 * is a compile error on both sides. Timestamps are ISO 8601 strings, as JSON carries
 * them.
 *
 * @module
 */

import type { RunNetwork } from './run-network.js';
import type { TokenKind } from './token-kind.js';
import type {
  CommandEgress,
  CommandEnding,
  ExpectedOutputResult,
  FilesRefused,
  RunStatus,
} from './wire-shapes.js';

/** A run, owned by the user whose token created it. */
export interface RunView {
  /** The run id: the workspace's name and the `runId` of every dispatch. */
  readonly id: string;
  /** `running` until the run is ended, then one of the terminal statuses. */
  readonly status: RunStatus;
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

/** `GET /v1/runs`: one page of the caller's runs, newest first. */
export interface RunPage {
  readonly runs: readonly RunView[];
  /** Pass as `before` for the next (older) page; null on the last page. */
  readonly nextBefore: string | null;
}

/** `POST /v1/runs/:runId/end`: the run as it ended. */
export interface EndRunAnswer {
  readonly run: RunView;
  /** Whether this call released its workspace (false on a repeat of the same status). */
  readonly released: boolean;
}

/** What deleting a run removed, counted by kind (`DELETE /v1/runs/:runId`'s `deleted`). */
export interface DeletedCounts {
  readonly objects: number;
  readonly commands: number;
  readonly workspaces: number;
  readonly artifacts: number;
}

/** `POST /v1/runs/:runId/fork`: the new run and where it starts. */
export interface ForkAnswer {
  readonly run: RunView;
  readonly forkedFrom: { readonly runId: string; readonly version: number };
  /** Entries the fork's first version holds (no blob copied). */
  readonly files: number;
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
  /** Entries its sync could not keep, as `ExecPayload.filesRefused`; absent when none. */
  readonly filesRefused?: FilesRefused;
  /** What its network refused, as `ExecPayload.egress`; absent when it had no network. */
  readonly egress?: CommandEgress;
  /** The workspace version its files were kept in, as `ExecPayload.version`. */
  readonly version?: number;
}

/** A command read by id (`GET /v1/commands/:commandId`): the list's fields and the output. */
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

/** `GET /v1/runs/:runId/commands`: one page of a run's commands, newest first. */
export interface CommandPage {
  readonly commands: readonly CommandSummaryRecord[];
  /** Pass as `before` for the next (older) page; null on the last page. */
  readonly nextBefore: string | null;
}

/**
 * What a cancel did: `cancelled`, it was queued and never runs; `cancelling`, its
 * worker kills it; `ended`, it had ended and nothing changed.
 */
export type CancelEffect = 'cancelled' | 'cancelling' | 'ended';

/** What a cancel answers: the command as it stands after, and the move it made. */
export interface CancelAnswer {
  readonly command: CommandRecord;
  readonly effect: CancelEffect;
}

/**
 * A workspace row's lifecycle: `provisioned` (live, one per run at most), then
 * `released` (with a reason) or `deleted` (the run's data was removed).
 */
export type WorkspaceStatus = 'provisioned' | 'released' | 'deleted';

/**
 * Why a workspace was released: the run ended (`run_<status>`), its replica was lost
 * to a takeover (`node_lost`), its replica drained and handed it off (`handed_off`),
 * or cleanup found it orphaned.
 */
export type ReleasedReason =
  | 'run_succeeded'
  | 'run_failed'
  | 'run_cancelled'
  | 'run_abandoned'
  | 'node_lost'
  | 'handed_off'
  | 'run_deleted'
  | 'orphaned';

/** A workspace row of one of the caller's runs. */
export interface WorkspaceRecord {
  readonly id: string;
  readonly runId: string;
  /** The replica that holds (or held) it; null on rows written before node ids. */
  readonly nodeId: string | null;
  readonly status: WorkspaceStatus;
  /** Why it was released; null while it is live. */
  readonly releasedReason: ReleasedReason | null;
  /** The release reason in words (an unknown reason as it is); null while it is live. */
  readonly releasedReasonText: string | null;
  readonly createdAt: string;
  readonly releasedAt: string | null;
}

/** `GET /v1/workspaces`: one page of the caller's workspaces, newest first. */
export interface WorkspacePage {
  readonly workspaces: readonly WorkspaceRecord[];
  /** Pass as `before` for the next (older) page; null on the last page. */
  readonly nextBefore: string | null;
}

/** A promoted artifact (`GET /v1/artifacts`). */
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

/** A token as its own user lists it (`GET /v1/tokens`): the operator's view without `userId`. */
export type OwnTokenRecord = Omit<TokenRecord, 'userId'>;

/** `POST /v1/admin/tokens`: the token made, and its secret, shown this once. */
export interface TokenCreatedAnswer {
  readonly token: TokenRecord;
  readonly secret: string;
}

/** A token revoke's answer: the token, and whether this call revoked it. */
export interface TokenRevokedAnswer<Token = TokenRecord> {
  readonly token: Token;
  /** False when it was revoked already. */
  readonly revoked: boolean;
}

/** `GET /v1/me`: who the token speaks for. */
export interface MeAnswer {
  readonly userId: string;
  readonly tokenKind: TokenKind;
}
