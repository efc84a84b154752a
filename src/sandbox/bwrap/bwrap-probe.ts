/**
 * Whether this host can run bwrap sandboxes: the programs of the launch chain are
 * there, and a trivial sandbox actually runs, under the seccomp filter when there is
 * one. What the sandboxes will lack here (a seccomp filter, the staging, cgroups, a CPU
 * limit) passes with a warning.
 *
 * @module
 */

import { access, constants, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type RunnerProbe, type RunResult, type RunSpec, SANDBOX_UID } from '../runner.js';
import { LAUNCH_UNSHARE } from './bwrap-launch.js';
import type { HostResources } from './host-resources.js';

/** What the probe looks at: the runner's paths and choices, and a way to run a command. */
export interface BwrapProbeTarget {
  readonly bwrapPath: string;
  readonly setprivPath: string;
  readonly dropPrivileges: boolean;
  /** Whether sandboxes run under a seccomp filter. */
  readonly seccomp: boolean;
  /** Why they run without one, or null. */
  readonly noSeccompReason: string | null;
  /** The CPU limit (`null`: none asked for). */
  readonly cpus: number | null | undefined;
  /** Where the scratch workspace of the trivial sandbox is made. */
  readonly probeRoot: string;
  readonly resources: HostResources;
  /** Runs one command in a fresh sandbox. */
  run(spec: RunSpec): Promise<RunResult>;
}

/** Exits 0 when the shell runs under a seccomp filter (mode 2), 3 otherwise. */
const SECCOMP_CHECK =
  'while read -r key value; do if [ "$key" = Seccomp: ]; then [ "$value" = 2 ] && exit 0; exit 3; fi; done < /proc/self/status; exit 3';

/**
 * Passes when bwrap (and setpriv, when dropping privileges) is present and a trivial
 * sandbox actually runs, under the seccomp filter when there is one. Running without
 * cgroups, or without a filter for this architecture, passes with a warning.
 */
export async function probeBwrap(target: BwrapProbeTarget): Promise<RunnerProbe> {
  const hint = 'apt-get install bubblewrap, or set MEMQL_RUNNER=docker / MEMQL_RUNNER=process';
  if (!(await isExecutable(target.bwrapPath))) {
    return { ok: false, reason: `bubblewrap (bwrap) not found at ${target.bwrapPath}: ${hint}` };
  }
  if (target.dropPrivileges && !(await isExecutable(target.setprivPath))) {
    return {
      ok: false,
      reason: `setpriv not found at ${target.setprivPath} (needed to drop root to uid ${SANDBOX_UID}): apt-get install util-linux`,
    };
  }
  if (target.dropPrivileges && !(await isExecutable(LAUNCH_UNSHARE))) {
    return {
      ok: false,
      reason: `unshare not found at ${LAUNCH_UNSHARE} (needed for the launch namespace): apt-get install util-linux`,
    };
  }
  const dir = await mkdtemp(join(target.probeRoot, 'memql-bwrap-probe-'));
  try {
    const result = await target.run({
      workspaceDir: dir,
      command: target.seccomp ? SECCOMP_CHECK : 'true',
      timeoutMs: 10_000,
      outputLimitBytes: 4096,
    });
    if (target.seccomp && result.exitCode === 3) {
      return {
        ok: false,
        reason: `the seccomp filter is not in force inside the sandbox (/proc/self/status does not say "Seccomp: 2"); ${hint}`,
      };
    }
    if (result.exitCode !== 0) {
      return {
        ok: false,
        reason: `a trivial bwrap sandbox exited ${result.exitCode ?? result.signal}: ${result.stderr.toString().trim()}; ${hint}`,
      };
    }
  } catch (err) {
    return {
      ok: false,
      reason: `a trivial bwrap sandbox did not start: ${(err as Error).message}; ${hint}`,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const warnings: string[] = [];
  if (target.noSeccompReason !== null) {
    warnings.push(`${target.noSeccompReason}: commands run without a seccomp filter`);
  }
  const unstaged = await target.resources.unstagedReason(target.probeRoot);
  if (unstaged) {
    warnings.push(`${unstaged}: the sandbox's mount table shows the workspace's host path`);
  }
  const cgroups = await target.resources.cgroupHierarchy();
  if (typeof cgroups === 'string') {
    warnings.push(
      `no per-command cgroups (${cgroups}): commands run without memory, process and CPU limits`,
    );
  } else if (cgroups.cpuUnavailable !== null && target.cpus !== null) {
    warnings.push(`no cpu cgroup (${cgroups.cpuUnavailable}): commands run without a CPU limit`);
  }
  return warnings.length > 0 ? { ok: true, warnings } : { ok: true };
}

/** Whether `path` is there and executable by the node. */
export async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
