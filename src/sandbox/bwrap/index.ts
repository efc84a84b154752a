/**
 * The bubblewrap runner, the Linux default: a command in fresh namespaces with the
 * workspace bound read-write (staged so no host path shows), the rest read-only, no
 * network but loopback, its options passed on a descriptor, a seccomp filter and a
 * cgroup per command; and a run's warm sandbox, whose agent starts each next command.
 *
 * ```ts
 * const runner = new BwrapRunner();
 * const probe = await runner.probe(); // ok, or why this host cannot run it
 * ```
 *
 * @module
 */

export {
  BWRAP_FDS,
  bwrapArgs,
  bwrapArgv,
  bwrapCommandLine,
  encodeBwrapOptions,
  SANDBOX_EGRESS_PRELUDE,
  SANDBOX_PRELUDE,
  sandboxEtcFiles,
} from './bwrap-args.js';
export { BwrapRunner, type ProcessSpec } from './bwrap-runner.js';
export type { ProcessExit, SessionProcess } from './session-processes.js';
export { findSystemDirs } from './system-dirs.js';
export { POOL_PREFIX, type WarmPoolStats } from './warm-pool.js';
export { STAGE_PREFIX } from './workspace-staging.js';
