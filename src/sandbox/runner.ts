/**
 * The sandbox seam: a {@link Runner} runs one agent command in a fresh sandbox and
 * reports how it ended. Backends: `bwrap` (Linux default), `docker` (production),
 * `process` (no isolation; only when an operator chooses it explicitly).
 */

import type { CommandRunResult, ExecRequest, OutputSink } from '../contract/index.js';
import type { SandboxEgress } from './egress-bridge.js';

/** Which backend a runner is. */
export type RunnerKind = 'bwrap' | 'docker' | 'process';

/**
 * One command to run: the queued `exec` request (the contract's type, read back from
 * its row) with where and under which limits it runs. `stdin` may also be bytes.
 */
export interface RunSpec extends Omit<ExecRequest, 'stdin'> {
  /**
   * Host path (absolute) of the workspace directory; it appears read-write at
   * `/workspace`. Commands run as {@link SANDBOX_UID}, so what the workspace layer puts
   * in it must belong to that uid; the bwrap backend hands the directory itself to it
   * (`lchown`, never recursive) and needs its parents searchable by it.
   */
  workspaceDir: string;
  /** Working directory relative to the workspace root (already checked safe). Default `.`. */
  cwd?: string;
  /** Shell text, run as `/bin/sh -c <command>`. */
  command: string;
  /** The agent's own environment entries; the node's environment never reaches the command. */
  env?: Record<string, string>;
  /** Bytes written to the command's standard input, then closed. */
  stdin?: string | Uint8Array;
  /** Wall-clock limit in milliseconds; the whole process tree is killed when it passes. */
  timeoutMs: number;
  /** Per-stream cap on captured output in bytes; the rest is counted, not kept. */
  outputLimitBytes: number;
  /** Memory limit in bytes, where the backend can enforce one. */
  memoryLimitBytes?: number;
  /** Maximum number of processes, where the backend can enforce one. */
  pidsLimit?: number;
  /** Aborting it cancels the command: the whole process tree is killed. */
  signal?: AbortSignal;
  /** Called with output as it arrives (also within the cap only). */
  onOutput?: OutputSink;
  /**
   * A key under which the runner may keep this command's sandbox warm and run the next
   * command of the same workspace in it (the bwrap backend, see `bwrap-session.ts`).
   * The caller changes the key whenever anything but a command changed the workspace
   * directory: a warm sandbox's view of it may then be stale. Absent: a sandbox of its
   * own, ended with the command.
   */
  reuse?: string;
  /**
   * The run's way to the network: its egress proxy's socket and the CA bundle its
   * commands trust (see `egress-bridge.ts`). Absent: no network at all. A command with
   * egress never runs in a warm sandbox made without it, nor the reverse.
   */
  egress?: SandboxEgress;
}

/** How a command ended, as a runner reports it (output as Buffers). */
export type RunResult = CommandRunResult<Buffer>;

/**
 * Whether a backend can run here, and if not, what to install or set. A backend that
 * runs with reduced protection (bwrap without cgroups: no memory or process limits)
 * passes with `warnings` saying what is missing, for the node to log.
 */
export type RunnerProbe =
  | { ok: true; warnings?: readonly string[] }
  | { ok: false; reason: string };

/** A sandbox backend. */
export interface Runner {
  readonly kind: RunnerKind;
  /** Checks that the backend works on this host (binary present, daemon reachable). */
  probe(): Promise<RunnerProbe>;
  /** Runs one command. Rejects only when the sandbox itself could not be started. */
  run(spec: RunSpec): Promise<RunResult>;
  /**
   * Programs this backend's sandbox provides beyond the base allowlist, as its image
   * declares them (the docker runner's `memql.runner.programs` label): the exec
   * allowlist admits them for commands run here. Backends without one (bwrap, whose
   * sandbox is the node's own system) keep the base list.
   */
  providedPrograms?(): Promise<readonly string[]>;
  /** Ends the warm sandboxes of a workspace whose copy goes away (see `RunSpec.reuse`). */
  release?(workspaceDir: string): Promise<void>;
  /**
   * Starts keeping sandboxes ready ahead of commands in the background (the bwrap
   * backend's warm pool, when it has one); {@link close} ends them. Idempotent.
   */
  warm?(): void;
  /** Ends every warm sandbox; the node is stopping. */
  close?(): Promise<void>;
  /**
   * Removes what killed nodes left behind on this host (the bwrap backend's empty
   * per-command cgroups) and returns how many things it removed. Backends that leave
   * nothing behind have none. Never throws.
   */
  sweepLeftovers?(): Promise<number>;
}

/** The uid (and gid) commands run as, in every backend. */
export const SANDBOX_UID = 10001;
