/**
 * The `bwrap` backend: each command in a fresh bubblewrap sandbox (see
 * {@link bwrapArgs} for what it sees).
 *
 * Launch chain, all with an EMPTY environment (bwrap would otherwise expose the node's
 * environment through `/proc/1/environ` inside the sandbox):
 *
 *   node (root) → setpriv `--pdeathsig` → /bin/sh launcher: writes its own pid into the
 *   command's cgroups, so every later process is in them → `env -i` → `unshare --pid
 *   --mount --fork` (a namespace whose init ends the whole sandbox when killed; see
 *   `bwrap-launch.ts`) → an overlay over the workspace's path (so the sandbox's mount
 *   table shows no host path; see `workspace-staging.ts`) → setpriv to uid/gid 10001, no
 *   supplementary groups → bwrap (unprivileged, in a new user namespace) → prelude →
 *   /bin/sh -c <command>
 *
 * Privileges are dropped before bwrap: a bwrap started as root maps root, so files the
 * command writes would belong to root on the host and per-user limits would not apply.
 * When the node is not root it cannot drop to 10001; bwrap then runs as the node's user
 * and maps it to 10001 inside (files on the host belong to the node's user).
 *
 * Limits: wall clock (tree kill), output (per-stream caps), processes, memory and CPU
 * time through per-command cgroups (v1) where the node can create them; without them the
 * run still works and the tree kill still holds (killing bwrap kills the sandbox's pid
 * namespace through `--die-with-parent`), but memory, process counts and CPU are not
 * limited. The CPU limit is a CFS quota: a command (its whole tree) gets at most that
 * many CPUs' worth of time, so a busy loop in one sandbox cannot starve other commands
 * or the node.
 *
 * Under the namespaces, a seccomp filter (`seccomp-policy.ts`) denies the syscalls no
 * command needs. On an architecture the filter has no table for, commands run without
 * it and the probe (`bwrap-probe.ts`) says so. The cgroups, the staging and the system
 * directories a sandbox takes from the host are `host-resources.ts`'s.
 *
 * @module
 */

import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import type { Duplex } from 'node:stream';
import pino from 'pino';
import { type OutputSink, WorkbenchError } from '../../contract/index.js';
import type { Logger } from '../../telemetry/index.js';
import type { CgroupLimits, CgroupV1Hierarchy } from '../cgroups/index.js';
import { commandEnv, SANDBOX_PATH } from '../command-env.js';
import { egressEnvironment, type SandboxEgress } from '../egress-bridge.js';
import {
  type Runner,
  type RunnerProbe,
  type RunResult,
  type RunSpec,
  SANDBOX_UID,
} from '../runner.js';
import { encodeFilter, seccompFilterFor } from '../seccomp/index.js';
import { cancelledBeforeStart } from '../supervise.js';
import { prepareCommandRoot, resolveCwd } from '../workspace-path.js';
import { type BwrapCommandLine, bwrapCommandLine, sandboxCwd } from './bwrap-args.js';
import { launchBwrap } from './bwrap-launch.js';
import { type BwrapRunnerOptions, limitsKey, sandboxLimits } from './bwrap-options.js';
import { isExecutable, probeBwrap } from './bwrap-probe.js';
import { BwrapSession } from './bwrap-session.js';
import { HostResources } from './host-resources.js';
import { AGENT_INTERPRETER, agentCommand } from './session-agent.js';
import { SessionPool } from './session-pool.js';
import type { SessionProcess } from './session-processes.js';
import { WarmPool } from './warm-pool.js';
import type { Stage } from './workspace-staging.js';

export type { BwrapRunnerOptions } from './bwrap-options.js';

/** What {@link BwrapRunner.startProcess} starts. */
export interface ProcessSpec {
  readonly workspaceDir: string;
  /** Shell text, run by `/bin/sh -c` in a session of its own. */
  readonly command: string;
  /** Workspace-relative working directory. Default the workspace root. */
  readonly cwd?: string;
  /** The agent's own environment entries, over the base. */
  readonly env?: Record<string, string>;
  /** The warm sandbox it lives in (`RunSpec.reuse`): the run's bounded commands share it. */
  readonly reuse: string;
  readonly memoryLimitBytes?: number;
  readonly pidsLimit?: number;
  /** A terminal of this size as its stdin, stdout and stderr (`TERM=xterm-256color`). */
  readonly pty?: { readonly cols: number; readonly rows: number };
  /** Receives its output as it comes. */
  readonly onOutput: OutputSink;
}

/** The environment every command starts from, before its own entries. */
const BASE_ENV = { PATH: SANDBOX_PATH, HOME: '/tmp', LANG: 'C.UTF-8' } as const;

const MiB = 1024 * 1024;

/** Runs each command in a fresh bubblewrap sandbox as uid 10001. */
export class BwrapRunner implements Runner {
  readonly kind = 'bwrap' as const;
  private readonly bwrapPath: string;
  private readonly setprivPath: string;
  private readonly dropPrivileges: boolean;
  /** Who owns a workspace root for its commands: uid 10001 when privileges drop. */
  private readonly sandboxOwner: { uid: number; gid: number } | null;
  /** The encoded filter, or null with {@link noSeccompReason} saying why. */
  private readonly seccompFilter: Buffer | null;
  private readonly noSeccompReason: string | null;
  private warnedNoSeccomp = false;
  /** The cgroups, staging and system directories sandboxes take from the host. */
  private readonly resources: HostResources;
  private readonly pool: SessionPool;
  /** The sandbox of each workspace that runs its background processes (for its ports). */
  private readonly processSessions = new Map<string, BwrapSession>();
  /** Sandboxes made ahead of any run (`warm-pool.ts`), or null without a pool. */
  private readonly warmPool: WarmPool | null;
  /** Calls in flight per workspace directory: the pool serves a directory only one call uses. */
  private readonly inFlight = new Map<string, number>();
  /** Whether warm sandboxes can run here (the agent's interpreter is present); looked up once. */
  private warmUsable: Promise<boolean> | undefined;
  private readonly log: Logger;

  constructor(private readonly options: BwrapRunnerOptions = {}) {
    this.bwrapPath = options.bwrapPath ?? '/usr/bin/bwrap';
    this.setprivPath = options.setprivPath ?? '/usr/bin/setpriv';
    this.dropPrivileges = options.dropPrivileges ?? process.getuid?.() === 0;
    this.sandboxOwner = this.dropPrivileges ? { uid: SANDBOX_UID, gid: SANDBOX_UID } : null;
    const filter =
      options.seccomp === false
        ? ({ ok: false, reason: 'disabled by configuration' } as const)
        : seccompFilterFor(options.arch ?? process.arch);
    this.seccompFilter = filter.ok ? encodeFilter(filter.program) : null;
    this.noSeccompReason = filter.ok ? null : filter.reason;
    this.resources = new HostResources({
      cgroups: options.cgroups,
      dropPrivileges: this.dropPrivileges,
      stageWorkspace: options.stageWorkspace,
      logger: options.logger,
    });
    this.pool = new SessionPool({
      idleMs: options.warmIdleMs ?? 30_000,
      maxIdle: options.maxWarm ?? 64,
    });
    this.log = options.logger ?? pino({ level: 'silent' });
    const pool = options.warmPool;
    if (pool !== undefined && pool.size > 0 && (options.warmIdleMs ?? 30_000) > 0) {
      const limits = sandboxLimits(pool, options);
      this.warmPool = new WarmPool({
        size: pool.size,
        dir: pool.dir,
        limitsKey: limitsKey(limits),
        start: (dir) => this.startSession(dir, limits, '', { pooled: true }),
        owner: this.sandboxOwner,
        log: this.log,
      });
    } else {
      this.warmPool = null;
    }
  }

  /**
   * Starts filling the warm pool in the background, when there is one and warm
   * sandboxes run here. Idempotent; {@link close} ends the pool's sandboxes.
   */
  warm(): void {
    const pool = this.warmPool;
    if (pool === null) return;
    void this.warmSandboxes().then((usable) => {
      if (usable) pool.fill();
    });
  }

  /** The warm pool's counts and its fill, for tests and the bench; null without one. */
  get pooled(): Pick<WarmPool, 'stats' | 'filled'> | null {
    return this.warmPool;
  }

  /**
   * Passes when bwrap (and setpriv, when dropping privileges) is present and a trivial
   * sandbox actually runs, under the seccomp filter when there is one. Running without
   * cgroups, or without a filter for this architecture, passes with a warning.
   */
  async probe(): Promise<RunnerProbe> {
    return probeBwrap({
      bwrapPath: this.bwrapPath,
      setprivPath: this.setprivPath,
      dropPrivileges: this.dropPrivileges,
      seccomp: this.seccompFilter !== null,
      noSeccompReason: this.noSeccompReason,
      cpus: this.options.cpus,
      probeRoot: this.options.probeDir ?? tmpdir(),
      resources: this.resources,
      run: (spec) => this.run(spec),
    });
  }

  /**
   * Removes per-command cgroups that killed nodes left behind (see
   * {@link CgroupV1Hierarchy.sweepLeftovers}); the hierarchy does this once when it is
   * opened, and the node's cleanup sweep calls this periodically. Returns how many group
   * directories it removed; 0 without cgroups.
   */
  async sweepLeftovers(): Promise<number> {
    const hierarchy = await this.resources.cgroupHierarchy();
    return typeof hierarchy === 'string' ? 0 : hierarchy.sweepLeftovers();
  }

  run(spec: RunSpec): Promise<RunResult> {
    return this.holding(spec.workspaceDir, () => this.runOne(spec));
  }

  /** Runs `work` counted as a call in flight on `dir`. */
  private async holding<T>(dir: string, work: () => Promise<T>): Promise<T> {
    this.inFlight.set(dir, (this.inFlight.get(dir) ?? 0) + 1);
    try {
      return await work();
    } finally {
      const left = (this.inFlight.get(dir) ?? 1) - 1;
      if (left > 0) this.inFlight.set(dir, left);
      else this.inFlight.delete(dir);
    }
  }

  private async runOne(spec: RunSpec): Promise<RunResult> {
    const startedAt = performance.now();
    const cwd = resolveCwd(spec.cwd);
    // The proxy variables go over the agent's own entries: a command cannot point them elsewhere.
    const env = spec.egress
      ? {
          ...commandEnv(BASE_ENV, spec.env),
          ...egressEnvironment({ cache: spec.egress.cacheDir !== undefined }),
        }
      : commandEnv(BASE_ENV, spec.env);
    await prepareCommandRoot(spec.workspaceDir, cwd, this.sandboxOwner);
    if (this.noSeccompReason !== null && !this.warnedNoSeccomp) {
      this.warnedNoSeccomp = true;
      this.options.logger?.warn(
        { reason: this.noSeccompReason },
        'bwrap runner: commands run without a seccomp filter',
      );
    }
    if (spec.signal?.aborted) return cancelledBeforeStart(startedAt);
    const limits = sandboxLimits(spec, this.options);
    // A command with the network runs in a sandbox of its own: a warm sandbox holds no
    // proxy socket, and one that did must not serve a run whose network was taken away.
    if (spec.reuse !== undefined && spec.egress === undefined && (await this.warmSandboxes())) {
      const key = `${spec.reuse}\0${limitsKey(limits)}`;
      const session =
        (await this.pool.take(spec.workspaceDir, key, limitsKey(limits))) ??
        (await this.pooledSession(spec.workspaceDir, key, limitsKey(limits))) ??
        (await this.startSession(spec.workspaceDir, limits, key));
      try {
        return await session.run({ spec, cwd: sandboxCwd(cwd), env, startedAt });
      } finally {
        this.pool.give(session);
      }
    }

    const line = await this.sandboxArgs(spec.workspaceDir, cwd, env, spec.command, spec.egress);
    const cgroup = await this.resources.makeCgroup(limits);
    let stage: Stage | null = null;
    try {
      stage = await this.resources.stage(spec.workspaceDir);
      return await launchBwrap({
        spec,
        line,
        cgroup,
        startedAt,
        bwrapPath: this.bwrapPath,
        setprivPath: this.dropPrivileges ? this.setprivPath : null,
        seccompFilter: this.seccompFilter,
        stage: stage?.command ?? [],
      });
    } finally {
      await stage?.release();
      await this.resources.removeCgroup(cgroup);
    }
  }

  /**
   * Starts a background process in the warm sandbox of `spec.reuse` (made if there is
   * none): it shares the sandbox (its loopback, `/tmp`, limits) with the run's bounded
   * commands, which no longer end it, and lives until it ends, is signalled, or the
   * sandbox ends. Needs warm sandboxes (`MEMQL_SANDBOX_IDLE_MS` above 0 and
   * `/usr/bin/perl`): without them, `no_sandbox`.
   */
  startProcess(spec: ProcessSpec): Promise<SessionProcess> {
    return this.holding(spec.workspaceDir, () => this.startOne(spec));
  }

  private async startOne(spec: ProcessSpec): Promise<SessionProcess> {
    if (!(await this.warmSandboxes())) {
      throw new WorkbenchError(
        'no_sandbox',
        'no_sandbox: background processes live in a warm sandbox, and this node keeps none (MEMQL_SANDBOX_IDLE_MS is 0, or /usr/bin/perl is missing)',
      );
    }
    const cwd = resolveCwd(spec.cwd);
    const env = commandEnv(BASE_ENV, spec.env);
    await prepareCommandRoot(spec.workspaceDir, cwd, this.sandboxOwner);
    const limits = sandboxLimits(spec, this.options);
    const key = `${spec.reuse}\0${limitsKey(limits)}`;
    let session = await this.pool.take(spec.workspaceDir, key, limitsKey(limits));
    // Processes live only in a sandbox made for them (see startSession): a warm sandbox
    // of bounded commands gives way to one.
    if (session !== null && !session.forProcesses) {
      await session.end();
      session = null;
    }
    session ??= await this.startSession(spec.workspaceDir, limits, key, { forProcesses: true });
    this.processSessions.set(spec.workspaceDir, session);
    try {
      return await session.startProcess({
        command: spec.command,
        cwd: sandboxCwd(cwd),
        env: spec.pty ? { TERM: 'xterm-256color', ...env } : env,
        ...(spec.pty ? { pty: spec.pty } : {}),
        onOutput: spec.onOutput,
      });
    } finally {
      this.pool.give(session);
    }
  }

  /**
   * A connection to `port` on the loopback of the sandbox that runs `workspaceDir`'s
   * background processes. `port_not_listening` when no such sandbox runs, or nothing
   * listens on the port in it.
   */
  async connectPort(workspaceDir: string, port: number): Promise<Duplex> {
    const session = this.processSessions.get(workspaceDir);
    if (session === undefined || session.state === 'ended') {
      this.processSessions.delete(workspaceDir);
      throw new WorkbenchError(
        'port_not_listening',
        `port_not_listening: no background process runs in the run's sandbox, so nothing listens on port ${port}; start the server with process_start first`,
        { port },
      );
    }
    return session.connectPort(port);
  }

  /** Ends the warm sandbox of a workspace whose copy goes away. */
  async release(workspaceDir: string): Promise<void> {
    await this.pool.release(workspaceDir);
    // An ended process sandbox is forgotten: no other run reuses its directory, so it
    // would be kept for the node's life. A running one goes at a later release.
    if (this.processSessions.get(workspaceDir)?.state === 'ended') {
      this.processSessions.delete(workspaceDir);
    }
  }

  /** Ends every warm sandbox, the warm pool's included. */
  async close(): Promise<void> {
    await this.warmPool?.close();
    await this.pool.close();
  }

  /**
   * A sandbox of the warm pool for the workspace's first command (see `warm-pool.ts`),
   * or null: no pool, another sandbox may serve the directory (another call in flight,
   * background processes), or the pool cannot take the directory's place.
   */
  private async pooledSession(
    workspaceDir: string,
    key: string,
    limits: string,
  ): Promise<BwrapSession | null> {
    if (this.warmPool === null || (this.inFlight.get(workspaceDir) ?? 0) > 1) return null;
    const processes = this.processSessions.get(workspaceDir);
    if (processes !== undefined && processes.state !== 'ended') return null;
    return this.warmPool.claim(workspaceDir, key, limits);
  }

  /** A warm sandbox for `workspaceDir`, its agent ready (see `bwrap-session.ts`). */
  private async startSession(
    workspaceDir: string,
    limits: CgroupLimits,
    key: string,
    options: { forProcesses?: boolean; pooled?: boolean } = {},
  ): Promise<BwrapSession> {
    const inode = (await stat(workspaceDir)).ino;
    const line = await this.sandboxArgs(workspaceDir, '.', BASE_ENV, agentCommand());
    const cgroup = await this.resources.makeCgroup(limits);
    let stage: Stage | null = null;
    try {
      // A sandbox for background processes binds the workspace as it is, without the
      // staging overlay: the node's own writes (file actions) must reach the processes
      // at once, and an overlay whose upper layer changes under it shows stale files.
      stage = options.forProcesses ? null : await this.resources.stage(workspaceDir);
    } catch (err) {
      await this.resources.removeCgroup(cgroup);
      throw err;
    }
    return BwrapSession.start({
      launch: {
        line,
        cgroup,
        bwrapPath: this.bwrapPath,
        setprivPath: this.dropPrivileges ? this.setprivPath : null,
        seccompFilter: this.seccompFilter,
        stage: stage?.command ?? [],
      },
      workspaceDir,
      inode,
      key,
      limitsKey: limitsKey(limits),
      forProcesses: options.forProcesses === true,
      pooled: options.pooled === true,
      release: async () => {
        await stage?.release();
        await this.resources.removeCgroup(cgroup);
      },
      log: this.log.child({ workspaceDir }),
    });
  }

  /** Whether commands with a `reuse` key run in warm sandboxes here. */
  private warmSandboxes(): Promise<boolean> {
    this.warmUsable ??= (async () => {
      if ((this.options.warmIdleMs ?? 30_000) <= 0) return false;
      if (await isExecutable(AGENT_INTERPRETER)) return true;
      this.options.logger?.warn(
        { interpreter: AGENT_INTERPRETER },
        'bwrap runner: no warm sandboxes (their agent needs perl); every command starts a sandbox of its own',
      );
      return false;
    })();
    return this.warmUsable;
  }

  private sandboxArgs(
    workspaceDir: string,
    cwd: string,
    env: Readonly<Record<string, string>>,
    command: string,
    egress?: SandboxEgress,
  ): Promise<BwrapCommandLine> {
    return this.resources.hostSystemDirs().then((systemDirs) =>
      bwrapCommandLine({
        workspaceDir,
        cwd,
        env,
        command,
        systemDirs,
        tmpSizeBytes: this.options.tmpSizeBytes ?? 256 * MiB,
        shmSizeBytes: this.options.shmSizeBytes ?? 64 * MiB,
        mapToUid: this.dropPrivileges ? undefined : SANDBOX_UID,
        seccomp: this.seccompFilter !== null,
        ...(egress ? { egress } : {}),
      }),
    );
  }
}
