/**
 * The bwrap runner's options, each with its default, and the limits of one sandbox
 * they make with a command's own.
 *
 * @module
 */

import type { Logger } from '../../telemetry/index.js';
import type { CgroupLimits, CgroupV1Options } from '../cgroups/index.js';
import type { RunSpec } from '../runner.js';

const MiB = 1024 * 1024;

/** Options of `BwrapRunner`. Every one has a default. */
export interface BwrapRunnerOptions {
  /** Default `/usr/bin/bwrap`. */
  bwrapPath?: string;
  /** util-linux `setpriv`, used to drop from root to uid 10001. Default `/usr/bin/setpriv`. */
  setprivPath?: string;
  /** Where to create per-command cgroups, or `false` to never use them. Default: the v1 hierarchy at `/sys/fs/cgroup`. */
  cgroups?: CgroupV1Options | false;
  /** Process limit when a spec gives none. Default 512. */
  defaultPidsLimit?: number;
  /** Memory limit in bytes when a spec gives none. Default 2 GiB. */
  defaultMemoryLimitBytes?: number;
  /**
   * CPU time of one command (its whole process tree) per wall-clock time, in CPUs
   * (`MEMQL_EXEC_CPU_LIMIT`), e.g. 0.5 or 2; `null` for no CPU limit (the command then
   * shares the node's cpu cgroup). Default 1.
   */
  cpus?: number | null;
  /** Size of the private `/tmp` in bytes (its pages count as the command's memory). Default 256 MiB. */
  tmpSizeBytes?: number;
  /** Size of the private `/dev/shm` in bytes. Default 64 MiB. */
  shmSizeBytes?: number;
  /** Drop from root to uid 10001 before bwrap. Default: when the node runs as root. */
  dropPrivileges?: boolean;
  /**
   * Install the seccomp filter (`seccomp-policy.ts`) in every sandbox. Default true;
   * `false` only to compare with the filter off (tests, diagnosis).
   */
  seccomp?: boolean;
  /** The architecture to build the filter for, as Node names it. Default `process.arch`. */
  arch?: string;
  /**
   * Mount the workspace through an overlay of its own so that the sandbox's mount table
   * shows no host path (`workspace-staging.ts`). Needs root. Default: when the node
   * runs as root.
   */
  stageWorkspace?: boolean;
  /** Where the runner's probe makes its scratch workspace. Default the OS temp dir. */
  probeDir?: string;
  /** Where to say that cgroups are unusable, or that a command cgroup could not be removed. */
  logger?: Logger;
  /**
   * How long a warm sandbox waits, idle, for the next command of its workspace, ms
   * (`MEMQL_SANDBOX_IDLE_MS`; see `bwrap-session.ts`). Only commands whose spec has a
   * `reuse` key run in one. 0: every command gets a sandbox of its own. Default 30000.
   */
  warmIdleMs?: number;
  /** Most warm sandboxes kept idle at once. Default 64. */
  maxWarm?: number;
  /**
   * The warm pool (`warm-pool.ts`): `size` sandboxes kept ready ahead of any run
   * (`MEMQL_SANDBOX_WARM_POOL`), over empty directories made in `dir`, the parent of the
   * runs' workspace directories (`MEMQL_WORKBENCH_ROOT`), under the limits a run's
   * commands get (the host's `memoryLimitBytes` and `pidsLimit`). Filled once
   * `BwrapRunner.warm` is called. Absent, size 0, or `warmIdleMs` 0: no pool.
   */
  warmPool?: {
    readonly size: number;
    readonly dir: string;
    readonly memoryLimitBytes?: number;
    readonly pidsLimit?: number;
  };
}

/**
 * The limits of a command's sandbox: its own process and memory limits, else the
 * runner's defaults, and the runner's CPU limit.
 */
export function sandboxLimits(
  spec: Pick<RunSpec, 'pidsLimit' | 'memoryLimitBytes'>,
  options: BwrapRunnerOptions,
): CgroupLimits {
  return {
    pidsMax: spec.pidsLimit ?? options.defaultPidsLimit ?? 512,
    memoryBytes: spec.memoryLimitBytes ?? options.defaultMemoryLimitBytes ?? 2048 * MiB,
    ...(options.cpus === null ? {} : { cpus: options.cpus ?? 1 }),
  };
}

/** The part of a warm sandbox's key its limits make. */
export function limitsKey(limits: CgroupLimits): string {
  return `${limits.pidsMax}\0${limits.memoryBytes}`;
}
