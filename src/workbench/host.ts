import { chown, mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type Authority,
  checkActionAuthority,
  type DispatchResult,
  type Envelope,
  environmentFailure,
  evaluateEnvironment,
  okResult,
  parseEnvelope,
  resultFromError,
  WORKBENCH_PROVIDES,
  WorkbenchError,
} from '../contract/index.js';
import type { ObjectStore } from '../objects/index.js';
import { CommandQueue, type ExecuteContext, type ExecutionResult } from '../queue/index.js';
import { sweepRunnerLeftovers } from '../sandbox/select-runner.js';
import {
  type Command,
  type Db,
  getRun,
  isTerminalRunStatus,
  type Run,
  StoreError,
} from '../store/index.js';
import type { Logger } from '../telemetry/logger.js';
import type { CommandMetrics } from '../telemetry/metrics.js';
import { startSweeper } from './cleanup-sweeper.js';
import {
  type ExecDeps,
  type ExecPayload,
  type ExecRequest,
  execPayload,
  prepareExec,
  runInSandbox,
} from './exec-action.js';
import { type FetchLimits, runFetch } from './fetch-action.js';
import { type FileContext, fsDelete, fsList, fsRead, fsWrite } from './file-actions.js';
import { promoteArtifact } from './promote-artifact.js';
import { RunLocks } from './run-locks.js';
import { WarmCache } from './warm-cache.js';
import { ensureWorkspace } from './workspace-lifecycle.js';
import { reconcileWorkspace, syncWorkspace, type WorkspaceSyncDeps } from './workspace-sync.js';

/** Everything the workbench host is built from. */
export interface WorkbenchHostDeps {
  db: Db;
  /** Where workspace file bytes live (content-addressed, per run). */
  objects: ObjectStore;
  /** `MEMQL_NODE_ID`, stamped on the workspace rows this node holds. */
  nodeId: string;
  /** This node's OS in Go's naming (`linux`), for the environment hint. */
  nodeOs: string;
  /** `MEMQL_WORKBENCH_ROOT`. */
  workbenchRoot: string;
  /** Owner of workspace directories and files the node writes: the sandbox uid, when root. */
  fileOwner?: { uid: number; gid: number };
  /** Read and write caps of the file actions, bytes. */
  files: { maxReadBytes: number; maxWriteBytes: number };
  exec: ExecDeps;
  fetch: FetchLimits;
  /** The durable command queue's settings (`MEMQL_WORKER_CONCURRENCY`, lease, poll). */
  queue: { concurrency: number; leaseMs: number; pollIntervalMs: number; metrics?: CommandMetrics };
  /** `MEMQL_HYDRATED_IDLE_TTL_MS`: how long a warm copy is kept after its last use; 0 disables reuse. */
  idleTtlMs: number;
  /** `MEMQL_CLEANUP_INTERVAL_MS`: period of the cleanup sweep. */
  cleanupIntervalMs: number;
  log: Logger;
}

/** Per-call options of {@link WorkbenchHost.handleDispatch}. */
export interface DispatchOptions {
  /** Cancels a running `exec` (the sandbox is killed) or a `fetch`. */
  signal?: AbortSignal;
  /** Receives `exec` output as it arrives. */
  onOutput?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void;
}

/** Store failures a caller can act on by retrying; everything else is internal. */
function translate(err: unknown): unknown {
  if (err instanceof StoreError && err.code === 'unavailable') {
    return new WorkbenchError(
      'unavailable',
      'unavailable: the database is unreachable; retry shortly',
    );
  }
  return err;
}

/**
 * What a workbench node does with one `workbenchHost` call, on the local and the
 * forwarded path alike. The steps, in order: parse; re-check the environment hint
 * and the authority; resolve the owner from the run row (nothing is written for a
 * run that does not resolve); provision or adopt the workspace; run the action;
 * sync what changed to durable storage; answer. A bad call never throws past
 * {@link handleDispatch}.
 *
 * Durability: the manifest in Postgres plus the bytes in the object store are the
 * workspace; the directory is a warm copy, reconciled before every action (cheaply
 * when this node wrote the latest version) and synced after every mutating one.
 * `exec` goes through the durable command queue; its executor runs on this node's
 * worker. Operations on one run are serialized on a node.
 */
export class WorkbenchHost {
  /** The node's side of the shared command queue. */
  readonly queue: CommandQueue;
  /** The warm copies this node holds. */
  readonly warm: WarmCache;
  private readonly locks = new RunLocks();
  private readonly sync: WorkspaceSyncDeps;
  private stopSweeper: (() => Promise<void>) | null = null;

  constructor(private readonly deps: WorkbenchHostDeps) {
    this.sync = {
      db: deps.db,
      objects: deps.objects,
      log: deps.log,
      ...(deps.fileOwner ? { owner: deps.fileOwner } : {}),
    };
    this.warm = new WarmCache({
      workbenchRoot: deps.workbenchRoot,
      idleTtlMs: deps.idleTtlMs,
      clock: () => Date.now(),
      log: deps.log,
    });
    this.queue = new CommandQueue({
      db: deps.db,
      nodeId: deps.nodeId,
      concurrency: deps.queue.concurrency,
      leaseMs: deps.queue.leaseMs,
      pollIntervalMs: deps.queue.pollIntervalMs,
      ...(deps.queue.metrics ? { metrics: deps.queue.metrics } : {}),
      execute: (command, ctx) => this.executeCommand(command, ctx),
      log: deps.log,
    });
  }

  /**
   * Starts the command worker and the cleanup sweep. Idempotent; the first `exec`
   * starts them too. Neither keeps the process alive on its own.
   */
  start(): void {
    if (this.queue.lifecycle === 'new') this.queue.start();
    this.stopSweeper ??= startSweeper(
      {
        db: this.deps.db,
        objects: this.deps.objects,
        nodeId: this.deps.nodeId,
        workbenchRoot: this.deps.workbenchRoot,
        log: this.deps.log,
        evictIdle: (now) => this.warm.evictIdle(now.getTime()),
        tracked: () => this.warm.tracked(),
        sweepSandbox: () => sweepRunnerLeftovers(this.deps.exec.runner),
      },
      this.deps.cleanupIntervalMs,
    );
  }

  /** Stops taking commands, lets running ones finish within `graceMs`, stops the sweep. */
  async stop(graceMs = 10_000): Promise<void> {
    await this.stopSweeper?.();
    this.stopSweeper = null;
    await this.queue.stop({ graceMs });
  }

  async handleDispatch(
    request: unknown,
    authority: Authority | undefined,
    options: DispatchOptions = {},
  ): Promise<DispatchResult> {
    const parsed = parseEnvelope(request);
    if (!parsed.ok) return parsed;
    const envelope = parsed.envelope;
    const env = environmentFailure(
      evaluateEnvironment(envelope.environment, WORKBENCH_PROVIDES, this.deps.nodeOs),
    );
    if (env) return env;
    const denied = checkActionAuthority(envelope.action, authority);
    if (denied) return denied;

    const log = this.deps.log.child({ runId: envelope.runId, action: envelope.action });
    try {
      return okResult(await this.run(envelope, options));
    } catch (raw) {
      const err = translate(raw);
      const result = resultFromError(err);
      if (result.errorCode === 'internal') log.error({ err }, 'workbench call failed');
      else log.info({ errorCode: result.errorCode }, 'workbench call refused');
      return result;
    }
  }

  /** A command's answer by id, for a caller that lost its connection. Null when absent. */
  async commandResult(commandId: string): Promise<ExecPayload | Command | null> {
    const command = await this.queue.get(commandId);
    if (command === null) return null;
    if (command.status === 'queued' || command.status === 'running') return command;
    return execPayload(command);
  }

  private async resolveRun(runId: string): Promise<Run> {
    const run = await getRun(this.deps.db, runId);
    if (run === null) {
      throw new WorkbenchError(
        'workspace_owner_unresolved',
        `workspace_owner_unresolved: run "${runId}" does not exist, so its workspace has no owner; create the run first`,
        { runId },
      );
    }
    if (isTerminalRunStatus(run.status)) {
      throw new WorkbenchError(
        'run_ended',
        `run_ended: run "${run.id}" ended as "${run.status}" and its workspace is released; start a new run`,
        { runId: run.id, status: run.status },
      );
    }
    return run;
  }

  private async run(envelope: Envelope, options: DispatchOptions): Promise<unknown> {
    const run = await this.resolveRun(envelope.runId);
    // Refusals that need no workspace come before one is provisioned.
    const exec = envelope.action === 'exec' ? prepareExec(this.deps.exec, envelope.args) : null;
    if (envelope.action === 'build') {
      throw new WorkbenchError(
        'unavailable',
        `unavailable: ${envelope.action} is not available on this node yet`,
      );
    }
    // Checked before provisioning, which makes the directory.
    await this.forgetIfGone(run.id, join(this.deps.workbenchRoot, run.id));
    const ws = await ensureWorkspace(
      {
        db: this.deps.db,
        nodeId: this.deps.nodeId,
        workbenchRoot: this.deps.workbenchRoot,
        log: this.deps.log,
        ...(this.deps.fileOwner ? { dirOwner: this.deps.fileOwner } : {}),
      },
      run,
    );
    if (ws.decision !== 'adopt') this.warm.invalidate(run.id);
    if (exec) {
      this.start();
      const { command } = await this.queue.enqueue({
        runId: run.id,
        workspaceId: ws.workspace.id,
        ownerUserId: run.ownerUserId,
        conversationId: run.conversationId,
        callId: envelope.callId ?? null,
        request: { ...exec.request },
        timeoutMs: exec.timeoutMs,
      });
      const cancel = () => void this.queue.cancel(command.id);
      options.signal?.addEventListener('abort', cancel, { once: true });
      try {
        const done = await this.queue.waitForTerminal(command.id, {
          ...(options.onOutput ? { onOutput: options.onOutput } : {}),
        });
        return execPayload(done);
      } finally {
        options.signal?.removeEventListener('abort', cancel);
      }
    }
    const files: FileContext = {
      root: ws.dir,
      ...this.deps.files,
      ...(this.deps.fileOwner ? { owner: this.deps.fileOwner } : {}),
    };
    switch (envelope.action) {
      case 'fs_read':
        return this.withWorkspace(run.id, ws.dir, false, () => fsRead(files, envelope.args));
      case 'fs_list':
        return this.withWorkspace(run.id, ws.dir, false, () => fsList(files, envelope.args));
      case 'fs_write':
        return this.withWorkspace(run.id, ws.dir, true, () => fsWrite(files, envelope.args));
      case 'fs_delete':
        return this.withWorkspace(run.id, ws.dir, true, () => fsDelete(files, envelope.args));
      case 'fetch':
        return this.withWorkspace(run.id, ws.dir, true, () =>
          runFetch(files, this.deps.fetch, envelope.args, options.signal),
        );
      case 'promote_artifact':
        return this.withWorkspace(run.id, ws.dir, false, () =>
          promoteArtifact(this.deps, files, run, envelope.args),
        );
      default:
        throw new WorkbenchError('internal', `internal: unhandled action ${envelope.action}`);
    }
  }

  /**
   * Runs `work` on a run's directory made current: under the run's lock, reconciled
   * with the manifest first, and (when `mutating` and the work succeeded) synced back
   * after. A sync failure is the caller's error and leaves the previous durable state.
   */
  private withWorkspace<T>(
    runId: string,
    dir: string,
    mutating: boolean,
    work: () => Promise<T>,
  ): Promise<T> {
    return this.locks.run(runId, async () => {
      this.warm.begin(runId);
      try {
        await this.forgetIfGone(runId, dir);
        await mkdir(dir, { recursive: true });
        if (this.deps.fileOwner) await chown(dir, this.deps.fileOwner.uid, this.deps.fileOwner.gid);
        const known = this.warm.get(runId);
        const current = await reconcileWorkspace(this.sync, {
          runId,
          dir,
          nodeId: this.deps.nodeId,
          lastSyncedVersion: known?.version,
          lastSyncedBy: known?.updatedByNode ?? null,
        });
        this.warm.set(runId, current.version, current.updatedByNode);
        const result = await work();
        if (mutating) {
          const synced = await syncWorkspace(this.sync, { runId, dir, nodeId: this.deps.nodeId });
          if (synced.dirMatchesVersion) this.warm.set(runId, synced.version, synced.updatedByNode);
          else this.warm.invalidate(runId);
        }
        return result;
      } finally {
        await this.warm.end(runId);
      }
    });
  }

  /**
   * A directory removed behind the cache's back (by hand, by a run's end) no longer
   * matches what the cache knew of it: forget that, so the next reconcile is in full.
   */
  private async forgetIfGone(runId: string, dir: string): Promise<void> {
    const exists = await stat(dir).then(
      () => true,
      () => false,
    );
    if (!exists) this.warm.invalidate(runId);
  }

  /** The queue's executor: one claimed command, in its made-current workspace. */
  private executeCommand(command: Command, ctx: ExecuteContext): Promise<ExecutionResult> {
    const dir = join(this.deps.workbenchRoot, command.runId);
    return this.withWorkspace(command.runId, dir, true, () =>
      runInSandbox(
        this.deps.exec,
        dir,
        command.request as unknown as ExecRequest,
        command.timeoutMs,
        ctx,
      ),
    );
  }
}
