/**
 * The seam between the queue and whatever runs a command. The queue knows nothing of
 * sandboxes or workspaces: the host injects an {@link ExecuteCommand} that reads the
 * command's `request`, prepares the workspace and runs the sandbox.
 *
 * @module
 */

/** Which output stream a chunk came from. */
import type {
  CommandEgress,
  CommandRunResult,
  ErrorCode,
  ExpectedOutputResult,
  OutputStream,
} from '../contract/index.js';
import type { Command, FilesRefused, NewArtifact } from '../store/index.js';

export type { OutputStream };

/** What the queue hands the executor for one command. */
export interface ExecuteContext {
  /**
   * Aborted when the command must stop: a cancel, a lost lease, the worker-side
   * timeout backstop, or a node shutting down. The executor kills the sandbox and
   * returns (a result with `cancelled: true`, or a rejection); the queue decides
   * from the abort's cause what, if anything, to record.
   */
  signal: AbortSignal;
  /**
   * Marks the command begun, durably: call it right before starting anything the
   * command does (the sandbox), after what may still refuse it (holding and
   * reconciling the workspace). A command that never began is queued again when its
   * executor is refused or its worker is lost, instead of being recorded as lost.
   * Rejects when the command must not start: its lease is gone, or the database did
   * not answer (`unavailable`; it is then queued again). An executor of a queue built
   * without `executorMarksBegin` finds it marked already.
   */
  begin(): Promise<void>;
  /** Live output, fanned out to callers waiting on this command on this node. */
  onOutput(stream: OutputStream, chunk: Uint8Array): void;
  /**
   * The command itself has ended; what follows is keeping its result (the file sync).
   * From here a cancel or the worker's timeout backstop no longer stops the executor:
   * the command ran, and its outcome is what gets recorded. `exitCode` is how it
   * ended (null for a signal), told to callers if recording is delayed.
   */
  ran(exitCode: number | null): void;
  /**
   * True once the worker has given the command up (its node is stopping, or its lease
   * went to another worker): an executor retrying a dependency after the command ran
   * should stop and return what it has.
   */
  stopping(): boolean;
  /**
   * The command ran and the executor is retrying a dependency to keep its result (the
   * file sync, say). Lets the queue tell waiting callers, if it lasts, that the
   * outcome will be recorded later.
   */
  recordingDelayed(err: unknown): void;
}

/**
 * The command ran but its file changes could not be kept: the workspace was released
 * meanwhile, or a dependency failed for good. Recorded as `failed` with this code and
 * category `files_not_saved`, together with the command's real exit and output.
 */
export interface FilesNotSaved {
  errorCode: ErrorCode;
  /** Why, for the message: a summary without paths or contents. */
  reason: string;
}

/**
 * How an execution ended: the runner's {@link CommandRunResult} (a sandbox runner's
 * `RunResult` is one, so an executor can return it as is), and what became of the
 * files it changed. A non-zero exit is a result, not an error.
 */
export interface ExecutionResult extends CommandRunResult {
  /** Set when the command ran but its file changes could not be kept. */
  filesNotSaved?: FilesNotSaved;
  /**
   * Set when the sync after the command kept everything but some entries it left
   * (a tree deeper than PATH_MAX, say): recorded with the command and shown to callers.
   */
  filesRefused?: FilesRefused;
  /** Set when the command ran with its run's network: the destinations refused meanwhile. */
  egress?: CommandEgress;
  /** The workspace version its sync left, when its files were kept. */
  workspaceVersion?: number;
  /**
   * Set when the command succeeded and named expected outputs: what became of each,
   * and the artifacts (bytes stored) to record with the outcome, in its statement.
   * Recorded only with a `completed` outcome.
   */
  outputs?: {
    results: readonly ExpectedOutputResult[];
    artifacts: readonly NewArtifact[];
  };
}

/**
 * Runs one claimed command. Rejects only when the command could not be run at all
 * (no sandbox, workspace unavailable): that ends the command `failed`, with the code
 * of a `WorkbenchError` (or any error whose `code` is a contract code), else `internal`.
 */
export type ExecuteCommand = (command: Command, ctx: ExecuteContext) => Promise<ExecutionResult>;
