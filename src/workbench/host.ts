import type { Duplex } from 'node:stream';
import type { EgressPolicy } from '../contract/index.js';
import {
  type Authority,
  checkActionAuthority,
  type DispatchResult,
  type Envelope,
  okResult,
  resultFromError,
  type Toolchain,
} from '../contract/index.js';
import { CommandQueue, DEFAULT_LIVENESS_MS, livenessRule } from '../queue/index.js';
import { sweepRunnerLeftovers } from '../sandbox/index.js';
import { CallIdConflict, type Command } from '../store/index.js';
import { defineStateMachine, StateMachine } from '../telemetry/index.js';
import {
  type ExecPayload,
  execPayload,
  removeStagesBefore,
  stagedBytes,
  UPLOAD_IDLE_MS,
  uploadStageDir,
} from './actions/index.js';
import { callIdConflictError, FileCallKeys } from './call-keys.js';
import { type CommandCallsDeps, commandCall } from './command-calls.js';
import { executeCommand } from './command-executor.js';
import { type FileCallsDeps, fileCall } from './file-calls.js';
import type { DispatchOptions, WorkbenchHostDeps } from './host-deps.js';
import {
  nodeStoppingRefusal,
  RunLocks,
  startSweeper,
  WorkspaceAccess,
  WorkspaceHandoff,
} from './lifecycle/index.js';
import { DEFAULT_PROCESS_SETTINGS, isProcessEnvelope, ProcessCalls } from './process-calls.js';
import { evictUnheld, type RunRelease, type RunReleaseDeps, releaseRun } from './run-release.js';
import { WarmCache, type WorkspaceSyncDeps } from './sync/index.js';
import { ToolchainWatch } from './toolchain-probe.js';
import { isVersionEnvelope, VersionCalls } from './version-calls.js';

export type { DispatchOptions, WorkbenchHostDeps } from './host-deps.js';

/**
 * A workbench host's lifecycle: `serving -> draining -> stopped`. Draining claims
 * nothing new and hands workspaces off as they go idle; `stopped` is final.
 */
export type HostState = 'serving' | 'draining' | 'stopped';

/** The host's moves, logged as `workbench-host`. */
export const HOST_LIFECYCLE = defineStateMachine<HostState>('workbench-host', 'serving', {
  serving: ['draining'],
  draining: ['stopped'],
  stopped: [],
});

/** Default of {@link WorkbenchHostDeps.handoffWaitMs}. */
export const DEFAULT_HANDOFF_WAIT_MS = 30_000;

/**
 * What a workbench node does with one `workbenchHost` call, on the local and the
 * forwarded path alike. The envelope comes parsed and admitted from the process's
 * boundary (the agent dispatcher in process, the mesh service for a forwarded call).
 * The steps, in order: the build gate once more, where a build would run; resolve
 * the owner from the run row (nothing is written for a run that does not resolve);
 * provision or adopt the workspace; run the action; sync what changed to durable
 * storage; answer. A bad call never throws past {@link handleDispatch}.
 *
 * Durability: the manifest in Postgres plus the bytes in the object store are the
 * workspace; the directory is a warm copy, reconciled before every action (cheaply
 * when this node wrote the latest version) and synced after every mutating one, as
 * the workspace's holder (`lifecycle/workspace-access.ts`). `exec` goes through the
 * durable command queue (`command-calls.ts`); its executor runs on the holder's
 * worker. A system-authority `build` is one more such command, its text made by
 * `actions/build.ts`, refused with `build_unavailable` when this node's sandbox lacks
 * a build tool (see `toolchain-probe.ts`). Operations on one run are serialized on a
 * node. A failure is answered by the contract's converter, whichever action met it.
 *
 * Lifecycle: `serving -> draining -> stopped`. Draining claims nothing new, lets
 * running commands finish, and hands each workspace off as soon as nothing of this
 * node uses it; other nodes wait for the handoff rather than take over.
 */
export class WorkbenchHost {
  /** The node's side of the shared command queue. */
  readonly queue: CommandQueue;
  /** The warm copies this node holds. */
  readonly warm: WarmCache;
  private readonly locks = new RunLocks();
  private readonly access: WorkspaceAccess;
  private stopSweeper: (() => Promise<void>) | null = null;
  private readonly lifecycle: StateMachine<HostState>;
  private readonly handoff: WorkspaceHandoff;
  private readonly toolchainWatch: ToolchainWatch;
  private readonly callKeys: FileCallKeys;
  /** When this host was made: upload stages older than this are an earlier process's. */
  private readonly madeAtMs = Date.now();
  private leftoverStages: Promise<void> | null = null;
  private leftoverProcesses: Promise<void> | null = null;
  private readonly release: RunReleaseDeps;
  /** The run's background processes on this node. */
  readonly processes: ProcessCalls;
  /** A run's versions: listed, compared, labelled, restored. */
  private readonly versions: VersionCalls;
  /** What the file actions run with. */
  private readonly files: FileCallsDeps;
  /** What `exec` and `build` run with. */
  private readonly commands: CommandCallsDeps;

  constructor(private readonly deps: WorkbenchHostDeps) {
    this.callKeys = new FileCallKeys({ db: deps.db, nodeId: deps.nodeId, log: deps.log });
    this.lifecycle = new StateMachine(HOST_LIFECYCLE, deps.log);
    this.toolchainWatch = new ToolchainWatch({
      runner: deps.exec.runner,
      nodeId: deps.nodeId,
      log: deps.log,
      ...(deps.probeDir ? { scratchRoot: deps.probeDir } : {}),
      ...(deps.fileOwner ? { owner: deps.fileOwner } : {}),
    });
    // A run's staged uploads count against its quota wherever the quota is checked.
    const staged = (runId: string) => stagedBytes(uploadStageDir(deps.workbenchRoot, runId));
    const sync: WorkspaceSyncDeps = {
      db: deps.db,
      objects: deps.objects,
      log: deps.log,
      ...(deps.fileOwner ? { owner: deps.fileOwner } : {}),
      ...(deps.quota ? { quota: deps.quota } : {}),
      stagedBytes: staged,
    };
    const selection = deps.exec.runner;
    this.warm = new WarmCache({
      workbenchRoot: deps.workbenchRoot,
      idleTtlMs: deps.idleTtlMs,
      ...(deps.warmManifestsMax !== undefined ? { maxManifests: deps.warmManifestsMax } : {}),
      clock: () => Date.now(),
      log: deps.log,
      // A warm sandbox of the directory goes before the directory does.
      onEvict: async (dir) => {
        if ('runner' in selection) await selection.runner.release?.(dir);
      },
    });
    const livenessMs = deps.queue.livenessMs ?? DEFAULT_LIVENESS_MS;
    this.access = new WorkspaceAccess({
      db: deps.db,
      nodeId: deps.nodeId,
      workbenchRoot: deps.workbenchRoot,
      ...(deps.fileOwner ? { fileOwner: deps.fileOwner } : {}),
      livenessMs,
      goneEvidence: livenessRule(livenessMs).evidence,
      handoffWaitMs: deps.handoffWaitMs ?? DEFAULT_HANDOFF_WAIT_MS,
      sync,
      warm: this.warm,
      locks: this.locks,
      draining: () => this.lifecycle.state !== 'serving',
      log: deps.log,
    });
    this.release = {
      db: deps.db,
      nodeId: deps.nodeId,
      workbenchRoot: deps.workbenchRoot,
      warm: this.warm,
      locks: this.locks,
      runner: selection,
      ...(deps.egress ? { egress: deps.egress } : {}),
      log: deps.log,
    };
    this.processes = new ProcessCalls({
      db: deps.db,
      nodeId: deps.nodeId,
      exec: deps.exec,
      access: this.access,
      warm: this.warm,
      settings: deps.processes ?? DEFAULT_PROCESS_SETTINGS,
      log: deps.log,
    });
    this.files = { ...deps, access: this.access };
    this.versions = new VersionCalls({
      db: deps.db,
      nodeId: deps.nodeId,
      access: this.access,
      sync,
    });
    this.handoff = new WorkspaceHandoff({
      db: deps.db,
      nodeId: deps.nodeId,
      idle: (runId) =>
        this.queue.idleFor(runId) &&
        !this.locks.busy(runId) &&
        this.processes.supervisor.liveIn(runId) === 0,
      handOff: (runId) => this.access.handOff(runId),
      log: deps.log,
    });
    this.queue = new CommandQueue({
      db: deps.db,
      nodeId: deps.nodeId,
      concurrency: deps.queue.concurrency,
      leaseMs: deps.queue.leaseMs,
      pollIntervalMs: deps.queue.pollIntervalMs,
      livenessMs,
      ...(deps.queue.metrics ? { metrics: deps.queue.metrics } : {}),
      ...(deps.queue.followUpLeadMs === undefined
        ? {}
        : { followUpLeadMs: deps.queue.followUpLeadMs }),
      executorMarksBegin: true,
      execute: (command, ctx) =>
        executeCommand(
          {
            access: this.access,
            exec: deps.exec,
            resolveRun: async (runId) => (await this.access.look(runId)).run,
            objects: deps.objects,
            files: {
              ...deps.files,
              ...(deps.fileOwner ? { owner: deps.fileOwner } : {}),
            },
            log: deps.log,
            ...(deps.quota ? { quota: deps.quota } : {}),
            ...(deps.egress ? { egress: deps.egress } : {}),
            stagedBytes: staged,
          },
          command,
          ctx,
        ),
      log: deps.log,
    });
    this.commands = {
      db: deps.db,
      nodeId: deps.nodeId,
      exec: deps.exec,
      access: this.access,
      queue: this.queue,
      pollIntervalMs: deps.queue.pollIntervalMs,
      handoffWaitMs: deps.handoffWaitMs ?? DEFAULT_HANDOFF_WAIT_MS,
      toolchainSettled: () => this.toolchainSettled(),
      serving: () => this.lifecycle.state === 'serving',
      start: () => this.start(),
      log: deps.log,
    };
  }

  /**
   * Starts the command worker, the cleanup sweep, the build toolchain probe and the
   * runner's warm pool, and removes the upload stages an earlier process of the node left
   * (those last written before this host was made). Idempotent; the first `exec` starts
   * them too. None but the warm pool's sandboxes keeps the process alive on its own.
   */
  start(): void {
    if (this.queue.lifecycle === 'new') this.queue.start();
    const selection = this.deps.exec.runner;
    if ('runner' in selection) selection.runner.warm?.();
    void this.toolchainWatch.settled();
    // Nothing an earlier process of this node ran runs any more.
    this.leftoverProcesses ??= this.processes.supervisor.loseLeftovers().then(
      (lost) => {
        if (lost.length > 0) {
          this.deps.log.info(
            { lost: lost.length },
            'processes of an earlier process of this node lost',
          );
        }
      },
      (err: unknown) => this.deps.log.warn({ err }, 'leftover processes could not be marked lost'),
    );
    this.leftoverStages ??= removeStagesBefore(this.deps.workbenchRoot, this.madeAtMs).then(
      (swept) => {
        if (swept.removed > 0) {
          this.deps.log.info(swept, 'upload stages of an earlier process of this node removed');
        }
      },
      (err: unknown) => this.deps.log.warn({ err }, 'leftover upload stages could not be removed'),
    );
    this.stopSweeper ??= startSweeper(
      {
        db: this.deps.db,
        objects: this.deps.objects,
        nodeId: this.deps.nodeId,
        workbenchRoot: this.deps.workbenchRoot,
        log: this.deps.log,
        evictIdle: (now) => this.warm.evictIdle(now.getTime()),
        tracked: () => this.warm.tracked(),
        evictUnheld: (held) => evictUnheld(this.release, held),
        sweepSandbox: () => sweepRunnerLeftovers(this.deps.exec.runner),
        uploadIdleMs: this.deps.uploadIdleMs ?? UPLOAD_IDLE_MS,
        ...(this.deps.versionRetention ? { versionRetention: this.deps.versionRetention } : {}),
        ...(this.deps.queue.retention ? { rowRetention: this.deps.queue.retention } : {}),
      },
      this.deps.cleanupIntervalMs,
    );
  }

  /**
   * Lets go of what this node keeps of a run that ended or was deleted: its warm
   * sandbox (gone when this resolves, its processes' ends recorded), its warm copy and
   * its upload stages (see `run-release.ts`). A run that still runs keeps everything.
   */
  async releaseRun(runId: string): Promise<RunRelease> {
    // Its processes end with its sandbox: their ends are recorded before this answers.
    const ends = this.processes.supervisor.endsIn(runId);
    const released = await releaseRun(this.release, runId);
    await Promise.all(ends);
    return released;
  }

  /**
   * A connection to `port` on the loopback of the run's sandbox here, for the port
   * route: where its background processes listen, for the run's owner `ownerUserId`
   * (another user's run is `not_found`). `port_not_listening` when nothing listens.
   */
  openPort(runId: string, port: number, ownerUserId: string): Promise<Duplex> {
    return this.processes.openPort(runId, port, ownerUserId);
  }

  /**
   * A change to a run's network made through this process's API: in force from the
   * next connection of its commands (other nodes hear it through the database).
   */
  networkChanged(runId: string, policy: EgressPolicy): void {
    this.deps.egress?.changed(runId, policy);
  }

  /**
   * Starts draining: no new claims, and each workspace this node holds is handed off
   * once no command or action of this node uses it. Other nodes wait for the handoff
   * instead of taking the workspace over. Idempotent.
   */
  async drain(): Promise<void> {
    if (!this.lifecycle.moveTo('draining')) return;
    this.deps.log.info('workbench draining: handing workspaces off as they go idle');
    await this.queue.drain();
    this.handoff.start();
  }

  /**
   * Stops: drains first if it has not, ends a toolchain probe still running, lets
   * running commands finish within `graceMs` and ends the rest as `node_stopping`, hands
   * every workspace it still holds off, stops the sweep, ends the warm sandboxes and
   * removes every upload stage.
   */
  async stop(graceMs = 10_000): Promise<void> {
    await this.drain();
    // Background processes get the grace too (SIGTERM now, SIGKILL after it), then end
    // `node_stopping` with their files synced, before the workspaces are handed off.
    const processesEnded = this.processes.supervisor.endAll(graceMs);
    await this.toolchainWatch.stop();
    await this.stopSweeper?.();
    this.stopSweeper = null;
    // Every workspace is handed off while this node still counts as live: a node seen
    // stopped with a workspace would be taken over as lost instead.
    await this.queue.stop({
      graceMs,
      beforeRetire: async () => {
        await processesEnded;
        await this.handoff.finish();
      },
    });
    // No command runs any more: the warm sandboxes go too.
    const selection = this.deps.exec.runner;
    if ('runner' in selection) await selection.runner.close?.();
    await this.deps.egress?.close();
    // No later process of this node can complete an upload this one staged.
    await this.leftoverStages;
    await removeStagesBefore(this.deps.workbenchRoot, Number.POSITIVE_INFINITY).catch(
      (err: unknown) => this.deps.log.warn({ err }, 'upload stages could not be removed at stop'),
    );
    this.lifecycle.moveTo('stopped');
  }

  /**
   * Which of the build's tools this node's sandbox runs, for its Health frames and the
   * fleet view; `null` until the probe (started by {@link start}) has ended.
   */
  toolchain(): Toolchain | null {
    return this.toolchainWatch.current();
  }

  /** Starts the toolchain probe if it has not, and resolves with what it found. */
  toolchainSettled(): Promise<Toolchain> {
    return this.toolchainWatch.settled();
  }

  async handleDispatch(
    envelope: Envelope,
    authority: Authority | undefined,
    options: DispatchOptions = {},
  ): Promise<DispatchResult> {
    const denied = checkActionAuthority(envelope.action, authority);
    if (denied) return denied;

    const log = this.deps.log.child({ runId: envelope.runId, action: envelope.action });
    const answer = async (work: () => Promise<DispatchResult>): Promise<DispatchResult> => {
      try {
        return await work();
      } catch (raw) {
        // A key that names another call is the store's finding; every other failure is
        // answered by the one converter (an outage of the database or the object store
        // as `unavailable`, whichever action met it).
        const err = raw instanceof CallIdConflict ? callIdConflictError(raw.record) : raw;
        const result = resultFromError(err);
        if (result.errorCode === 'internal') log.error({ err }, 'workbench call failed');
        else log.info({ errorCode: result.errorCode }, 'workbench call refused');
        return result;
      }
    };
    // A command's key is recorded with its command, a process's with its process; a file
    // action's here.
    if (envelope.action === 'exec' || envelope.action === 'build') {
      return answer(async () => okResult(await commandCall(this.commands, envelope, options)));
    }
    if (isProcessEnvelope(envelope)) {
      return answer(async () => {
        if (envelope.action === 'process_start' || envelope.action === 'process_shell') {
          if (this.lifecycle.state !== 'serving') throw nodeStoppingRefusal(this.deps.nodeId);
          this.start();
          await this.leftoverProcesses;
        }
        return okResult(await this.processes.handle(envelope, options.signal));
      });
    }
    if (isVersionEnvelope(envelope)) {
      const versions = () => answer(async () => okResult(await this.versions.handle(envelope)));
      // A restore's callId gives its recorded answer again, as a file action's does.
      return envelope.action === 'version_restore'
        ? answer(() => this.callKeys.run(envelope, versions))
        : versions();
    }
    const file = () =>
      answer(async () => okResult(await fileCall(this.files, envelope, options.signal)));
    return answer(() => this.callKeys.run(envelope, file));
  }

  /** A command's answer by id, for a caller that lost its connection. Null when absent. */
  async commandResult(commandId: string): Promise<ExecPayload | Command | null> {
    const command = await this.queue.get(commandId);
    if (command === null) return null;
    if (command.status === 'queued' || command.status === 'running') return command;
    return execPayload(command);
  }
}
