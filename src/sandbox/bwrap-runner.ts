/**
 * The `bwrap` backend: each command in a fresh bubblewrap sandbox (see
 * {@link bwrapArgs} for what it sees).
 *
 * Launch chain, all with an EMPTY environment (bwrap would otherwise expose the node's
 * environment through `/proc/1/environ` inside the sandbox):
 *
 *   node (root) → /bin/sh launcher: writes its own pid into the command's cgroups, so
 *   every later process is in them → `env -i` → setpriv to uid/gid 10001, no
 *   supplementary groups → bwrap (unprivileged, in a new user namespace) → prelude →
 *   /bin/sh -c <command>
 *
 * Privileges are dropped before bwrap: a bwrap started as root maps root, so files the
 * command writes would belong to root on the host and per-user limits would not apply.
 * When the node is not root it cannot drop to 10001; bwrap then runs as the node's user
 * and maps it to 10001 inside (files on the host belong to the node's user).
 *
 * Limits: wall clock (tree kill), output (per-stream caps), processes and memory through
 * per-command cgroups (v1) where the node can create them; without them the run still
 * works and the tree kill still holds (killing bwrap kills the sandbox's pid namespace
 * through `--die-with-parent`), but memory and process counts are not limited.
 *
 * @module
 */

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, constants, lstat, mkdtemp, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { WorkbenchError } from '../contract/errors.js';
import type { Logger } from '../telemetry/logger.js';
import { BWRAP_FDS, bwrapArgs, type SystemDirEntry, sandboxEtcFiles } from './bwrap-args.js';
import { CgroupV1Hierarchy, type CgroupV1Options, type CommandCgroup } from './cgroups.js';
import { commandEnv, SANDBOX_PATH } from './command-env.js';
import { createCommandOutput } from './output-capture.js';
import {
  type Runner,
  type RunnerProbe,
  type RunResult,
  type RunSpec,
  SANDBOX_UID,
} from './runner.js';
import { cancelledBeforeStart, superviseChild, waitUntilGone, withinMs } from './supervise.js';
import { ownWorkspaceRoot, requireCwdDirectory, resolveCwd } from './workspace-path.js';

/** Options of {@link BwrapRunner}. Every one has a default. */
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
  /** Size of the private `/tmp` in bytes (its pages count as the command's memory). Default 256 MiB. */
  tmpSizeBytes?: number;
  /** Size of the private `/dev/shm` in bytes. Default 64 MiB. */
  shmSizeBytes?: number;
  /** Drop from root to uid 10001 before bwrap. Default: when the node runs as root. */
  dropPrivileges?: boolean;
  /** Where {@link BwrapRunner.probe} makes its scratch workspace. Default the OS temp dir. */
  probeDir?: string;
  /** Where to say that cgroups are unusable, or that a command cgroup could not be removed. */
  logger?: Logger;
}

const MiB = 1024 * 1024;

/**
 * Joins the cgroups named as arguments (count first), then execs the rest under
 * `env -i`. The node spawns it with an empty environment already; `env -i` makes that
 * hold even when something in the node (a preload, an instrumentation hook) adds
 * variables to every spawn, as test harnesses do. Exits 125, without the "started"
 * byte, when joining a cgroup fails.
 */
const LAUNCHER =
  'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n - 1)); done; exec /usr/bin/env -i "$@"';

/** Runs each command in a fresh bubblewrap sandbox as uid 10001. */
export class BwrapRunner implements Runner {
  readonly kind = 'bwrap' as const;
  private readonly bwrapPath: string;
  private readonly setprivPath: string;
  private readonly dropPrivileges: boolean;
  private cgroups: Promise<CgroupV1Hierarchy | string> | undefined;
  private systemDirs: Promise<SystemDirEntry[]> | undefined;

  constructor(private readonly options: BwrapRunnerOptions = {}) {
    this.bwrapPath = options.bwrapPath ?? '/usr/bin/bwrap';
    this.setprivPath = options.setprivPath ?? '/usr/bin/setpriv';
    this.dropPrivileges = options.dropPrivileges ?? process.getuid?.() === 0;
  }

  /**
   * Passes when bwrap (and setpriv, when dropping privileges) is present and a trivial
   * sandbox (`true`) actually runs. Running without cgroups passes with a warning.
   */
  async probe(): Promise<RunnerProbe> {
    const hint = 'apt-get install bubblewrap, or set MEMQL_RUNNER=docker / MEMQL_RUNNER=process';
    if (!(await isExecutable(this.bwrapPath))) {
      return { ok: false, reason: `bubblewrap (bwrap) not found at ${this.bwrapPath}: ${hint}` };
    }
    if (this.dropPrivileges && !(await isExecutable(this.setprivPath))) {
      return {
        ok: false,
        reason: `setpriv not found at ${this.setprivPath} (needed to drop root to uid ${SANDBOX_UID}): apt-get install util-linux`,
      };
    }
    const dir = await mkdtemp(join(this.options.probeDir ?? tmpdir(), 'memql-bwrap-probe-'));
    try {
      const result = await this.run({
        workspaceDir: dir,
        command: 'true',
        timeoutMs: 10_000,
        outputLimitBytes: 4096,
      });
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
    const cgroups = await this.cgroupHierarchy();
    if (typeof cgroups === 'string') {
      return {
        ok: true,
        warnings: [
          `no per-command cgroups (${cgroups}): commands run without memory and process limits`,
        ],
      };
    }
    return { ok: true };
  }

  async run(spec: RunSpec): Promise<RunResult> {
    const startedAt = performance.now();
    const cwd = resolveCwd(spec.cwd);
    const env = commandEnv({ PATH: SANDBOX_PATH, HOME: '/tmp', LANG: 'C.UTF-8' }, spec.env);
    if (this.dropPrivileges) await ownWorkspaceRoot(spec.workspaceDir, SANDBOX_UID, SANDBOX_UID);
    await requireCwdDirectory(spec.workspaceDir, cwd);

    const args = bwrapArgs({
      workspaceDir: spec.workspaceDir,
      cwd,
      env,
      command: spec.command,
      systemDirs: await this.hostSystemDirs(),
      tmpSizeBytes: this.options.tmpSizeBytes ?? 256 * MiB,
      shmSizeBytes: this.options.shmSizeBytes ?? 64 * MiB,
      mapToUid: this.dropPrivileges ? undefined : SANDBOX_UID,
    });
    if (spec.signal?.aborted) return cancelledBeforeStart(startedAt);
    const hierarchy = await this.cgroupHierarchy();
    const cgroup =
      typeof hierarchy === 'string'
        ? null
        : await hierarchy.create(randomBytes(8).toString('hex'), {
            pidsMax: spec.pidsLimit ?? this.options.defaultPidsLimit ?? 512,
            memoryBytes:
              spec.memoryLimitBytes ?? this.options.defaultMemoryLimitBytes ?? 2048 * MiB,
          });
    try {
      return await this.launch(spec, args, cgroup, startedAt);
    } finally {
      await cgroup?.remove().catch((err: unknown) => {
        this.options.logger?.warn({ err }, 'bwrap runner: could not remove a command cgroup');
      });
    }
  }

  private async launch(
    spec: RunSpec,
    args: string[],
    cgroup: CommandCgroup | null,
    startedAt: number,
  ): Promise<RunResult> {
    const procsFiles = cgroup?.procsFiles ?? [];
    const drop = this.dropPrivileges
      ? [this.setprivPath, `--reuid=${SANDBOX_UID}`, `--regid=${SANDBOX_UID}`, '--clear-groups']
      : [];
    const child = spawn(
      '/bin/sh',
      [
        '-c',
        LAUNCHER,
        'memql-launch',
        String(procsFiles.length),
        ...procsFiles,
        ...drop,
        this.bwrapPath,
        ...args,
      ],
      {
        cwd: '/',
        env: {},
        stdio: ['pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'],
      },
    );
    const extra = child.stdio as unknown as (Readable & Writable)[];
    // A pipe that breaks because the sandbox died is expected; never an unhandled error.
    for (const fd of Object.values(BWRAP_FDS)) extra[fd]?.on('error', () => {});
    let started = false;
    const startedPipe = extra[BWRAP_FDS.started];
    // Resolves once the command is about to run (or bwrap is gone). Before that, bwrap's
    // init may not have armed --die-with-parent yet: killing bwrap then can orphan it.
    const startedOrExited = new Promise<void>((resolve) => {
      startedPipe?.once('data', () => resolve());
      child.once('exit', () => resolve());
    });
    startedPipe?.on('data', () => {
      started = true;
    });
    let info = '';
    extra[BWRAP_FDS.info]?.on('data', (chunk: Buffer) => {
      if (info.length < 4096) info += chunk.toString();
    });
    // EOF comes once every holder (bwrap, its init, the prelude) is gone.
    const startedEnd = new Promise<void>((resolve) => {
      if (!startedPipe) return resolve();
      startedPipe.once('end', resolve).once('close', resolve).once('error', resolve);
    });
    const etc = sandboxEtcFiles(SANDBOX_UID);
    for (const [fd, text] of [
      [BWRAP_FDS.passwd, etc.passwd],
      [BWRAP_FDS.group, etc.group],
      [BWRAP_FDS.hosts, etc.hosts],
    ] as const) {
      extra[fd]?.end(text);
    }

    const output = createCommandOutput(spec.outputLimitBytes, spec.onOutput);
    const end = await superviseChild(child, {
      output,
      stdin: spec.stdin,
      timeoutMs: spec.timeoutMs,
      signal: spec.signal,
      killTree: async () => {
        // bwrap dies → its sandbox init gets SIGKILL (--die-with-parent) → the pid
        // namespace goes with it. The cgroup sweep covers anything in between.
        // Under heavy load the setup can take seconds; waiting long here is cheaper than
        // an orphaned sandbox.
        await withinMs(startedOrExited, 30_000);
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        // If bwrap still had not armed --die-with-parent, its init survives bwrap: kill it
        // directly (killing a pid namespace's init ends everything inside it).
        const init = /"child-pid":\s*(\d+)/.exec(info)?.[1];
        if (init !== undefined && !started) {
          try {
            process.kill(Number(init), 'SIGKILL');
          } catch {
            // Already gone.
          }
        }
        await cgroup?.killAll();
      },
    });
    await withinMs(startedEnd, 2000);
    // Killing bwrap tears the pid namespace down asynchronously; its init is gone (or a
    // zombie) only once every process in the namespace is. Without cgroups this is the
    // only way to know nothing is left.
    const initPid = /"child-pid":\s*(\d+)/.exec(info)?.[1];
    if (initPid !== undefined) await waitUntilGone(Number(initPid), 5000);
    for (const fd of Object.values(BWRAP_FDS)) extra[fd]?.destroy();

    if (!started && !end.timedOut && !end.cancelled) {
      const detail = output.stderr.bytes().toString().trim().slice(0, 2000);
      throw new WorkbenchError(
        'no_sandbox',
        `no_sandbox: the bwrap sandbox did not start (exit ${end.exitCode ?? end.signal}): ${detail || 'no message'}` +
          ` (bwrap runs as uid ${SANDBOX_UID}: the workspace directory and its parents must be searchable by it)`,
      );
    }
    // A child the OOM killer took while the command still succeeded did not end the command.
    const oomKilled = cgroup !== null && end.exitCode !== 0 && (await cgroup.oomKilled());
    return {
      ...end,
      oomKilled,
      stdout: output.stdout.bytes(),
      stderr: output.stderr.bytes(),
      stdoutTruncated: output.stdout.truncated,
      stderrTruncated: output.stderr.truncated,
      durationMs: Math.round(performance.now() - startedAt),
    };
  }

  /** The cgroup hierarchy, or why there is none; looked up once. */
  private cgroupHierarchy(): Promise<CgroupV1Hierarchy | string> {
    this.cgroups ??= (async () => {
      if (this.options.cgroups === false) return 'disabled by configuration';
      if (!this.dropPrivileges) return 'the node does not run as root';
      const found = await CgroupV1Hierarchy.open(this.options.cgroups || {});
      if (found.ok) return found.hierarchy;
      this.options.logger?.warn(
        { reason: found.reason },
        'bwrap runner: no per-command cgroups; commands run without memory and process limits',
      );
      return found.reason;
    })();
    return this.cgroups;
  }

  /** `/bin`, `/lib`, `/lib64`, `/sbin` as links into /usr (merged /usr) or directories. */
  private hostSystemDirs(): Promise<SystemDirEntry[]> {
    this.systemDirs ??= findSystemDirs();
    return this.systemDirs;
  }
}

/**
 * `/bin`, `/sbin`, `/lib`, ... as found on this host: links into /usr (merged /usr) or
 * directories. Exported for the benchmark's raw-bwrap baseline, which must pass the
 * same flags.
 */
export async function findSystemDirs(): Promise<SystemDirEntry[]> {
  const found: SystemDirEntry[] = [];
  for (const path of ['/bin', '/sbin', '/lib', '/lib64', '/lib32', '/libx32']) {
    const st = await lstat(path).catch(() => null);
    if (st?.isSymbolicLink()) found.push({ path, kind: 'symlink', target: await readlink(path) });
    else if (st?.isDirectory()) found.push({ path, kind: 'dir' });
  }
  return found;
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
