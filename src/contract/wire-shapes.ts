/**
 * Shapes that cross the wire as data: run and command statuses and the `exec` answer.
 * The store keeps them, the workbench answers with them, the client reads them; this
 * is the one place they are defined.
 *
 * @module
 */

/** A run's status: `running`, then one of the four terminal statuses. */
export type RunStatus = 'running' | 'succeeded' | 'failed' | 'cancelled' | 'abandoned';

/** The terminal statuses; reaching any of them releases the run's workspace. */
export const TERMINAL_RUN_STATUSES = ['succeeded', 'failed', 'cancelled', 'abandoned'] as const;

/** A terminal run status. */
export type TerminalRunStatus = (typeof TERMINAL_RUN_STATUSES)[number];

/** True for the four terminal statuses. */
export function isTerminalRunStatus(value: unknown): value is TerminalRunStatus {
  return (TERMINAL_RUN_STATUSES as readonly unknown[]).includes(value);
}

/**
 * How an `exec` command ended (the command row's lifecycle, not a call failure):
 * `queued -> running -> completed | failed | timed_out | cancelled`.
 */
export type CommandStatus =
  | 'queued'
  | 'running'
  | 'completed'
  | 'failed'
  | 'timed_out'
  | 'cancelled';

/**
 * How one command's execution ended, as its runner reports it and its row records it.
 * A non-zero exit is a result, not an error. `Bytes` is the output's type: a runner
 * hands Buffers.
 */
export interface CommandRunResult<Bytes extends Uint8Array = Uint8Array> {
  /** Exit status, or null when the command was killed by a signal. */
  exitCode: number | null;
  /** The signal that ended it, if any. */
  signal: string | null;
  /** True when the wall-clock limit ended it. */
  timedOut: boolean;
  /** True when the caller's abort signal ended it. */
  cancelled: boolean;
  /** True when the memory limit ended it, where the backend can tell. */
  oomKilled: boolean;
  stdout: Bytes;
  stderr: Bytes;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  /** Wall-clock milliseconds from start to end. */
  durationMs: number;
}

/** One workspace entry a file action or a sync could not keep or reach. */
export interface RefusedPath {
  /** Workspace-relative path, shortened around an ellipsis when long. */
  readonly path: string;
  /** `path_too_long`: its host path is over PATH_MAX (4096 bytes). */
  readonly reason: string;
}

/**
 * Workspace entries a command left that its sync could not keep: how many, and the
 * first of them (at most 20) with their paths shortened.
 */
export interface FilesRefused {
  /** How many entries were refused. */
  readonly total: number;
  readonly entries: readonly RefusedPath[];
}

/** One destination the egress proxy refused while a command ran. */
export interface RefusedDestination {
  /** The host asked for, as the proxy read it. */
  readonly host: string;
  readonly port: number;
  /**
   * Why, one word: `not_allowed` or `port_not_allowed` (not in the run's network),
   * `ip_literal` or `not_a_name` (not a host name), `address_blocked` (it resolved to
   * a loopback, private, link-local or metadata address), `sni_mismatch`,
   * `host_mismatch` or `not_tls` (the request named another host, or was not TLS),
   * `bad_request`, `dns_failed`, `upstream_failed`.
   */
  readonly reason: string;
}

/** What a command's network did: present for a command that ran with its run's network. */
export interface CommandEgress {
  /**
   * The destinations refused while it ran, each (host, port, reason) once, oldest
   * first, at most {@link MAX_EGRESS_REFUSALS}. Empty when nothing was refused.
   */
  readonly refused: readonly RefusedDestination[];
}

/** Most refusals a command's result lists. */
export const MAX_EGRESS_REFUSALS = 50;

/** A promoted artifact as a promotion answers it (`promote_artifact`, `exec` outputs). */
export interface PromotedArtifact {
  readonly artifactId: string;
  /** The name the user sees. */
  readonly name: string;
  readonly contentType: string;
  /** Bytes. */
  readonly size: number;
  /** Hex SHA-256 of the bytes. */
  readonly sha256: string;
  /** The workspace path the bytes came from. */
  readonly path: string;
  readonly runId: string;
}

/**
 * Why an expected output of `exec` was not promoted: `path_not_found` (the command did
 * not leave it), `invalid_path` (not a regular file, or a link out of the workspace),
 * `payload_too_large` (over the artifact size limit), `command_failed` (the command did
 * not succeed, so nothing was promoted), `unavailable` (the object store failed).
 */
export interface OutputError {
  /** A code of the contract's error list. */
  readonly code: string;
  /** What happened and what to do, for people and models. */
  readonly message: string;
}

/**
 * What became of one expected output of `exec`: promoted (`artifact`), or not, and
 * why (`error`). `path` is the path as the call named it.
 */
export type ExpectedOutputResult =
  | { readonly path: string; readonly artifact: PromotedArtifact }
  | { readonly path: string; readonly error: OutputError };

/** How a command ended, as callers read it: the `exec` answer and the command list. */
export interface CommandEnding {
  readonly status: CommandStatus;
  /** The exit code, or null when the command was killed by a signal or never ran. */
  readonly exitCode: number | null;
  /** The signal that killed the command, such as `SIGKILL`. */
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly cancelled: boolean;
  readonly oomKilled: boolean;
  readonly stdoutTruncated: boolean;
  readonly stderrTruncated: boolean;
  /** Run time in milliseconds, null when it never ran. */
  readonly durationMs: number | null;
}

/** What `exec` answers. A non-zero exit is an answer, not an error. */
export interface ExecPayload extends CommandEnding {
  /** The durable command id: read the command again by id after a lost connection. */
  readonly commandId: string;
  /** Standard output: UTF-8 text, or base64 when `stdoutEncoding` says so. */
  readonly stdout: string;
  /** Standard error: UTF-8 text, or base64 when `stderrEncoding` says so. */
  readonly stderr: string;
  /**
   * `base64` when the output is not UTF-8 text (binary bytes): `stdout` is then its
   * bytes in base64, never text with replacement characters. Absent for text.
   */
  readonly stdoutEncoding?: 'base64';
  /** As `stdoutEncoding`, for `stderr`. */
  readonly stderrEncoding?: 'base64';
  /**
   * Present when the command left entries its sync could not keep (a tree deeper than
   * PATH_MAX). Everything else it changed was kept; those stay in the replica's copy
   * until removed, and every sync that finds them reports them again.
   */
  readonly filesRefused?: FilesRefused;
  /**
   * Present when the call named expected outputs (and the command has ended): one
   * entry per output, in the call's order. A missing output does not change the
   * command's status; a command that did not succeed promotes none of them.
   */
  readonly outputs?: readonly ExpectedOutputResult[];
  /**
   * Present when the command ran with its run's network (`network` of the run): the
   * hosts the egress proxy refused while it ran, so a failed `pip install` arrives
   * with its reason. Absent: the command had no network.
   */
  readonly egress?: CommandEgress;
  /**
   * The workspace version its files were kept in (a new version when it changed any,
   * else the one it ran on; `version_list`); absent when they were not kept.
   */
  readonly version?: number;
}

/** Which stream a piece of command output came from. */
export type OutputStream = 'stdout' | 'stderr';

/** Where live command output goes, a chunk at a time, in the order it was written. */
export type OutputSink = (stream: OutputStream, chunk: Buffer) => void;
