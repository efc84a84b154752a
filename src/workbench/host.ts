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
import { type Db, getRun, isTerminalRunStatus, StoreError } from '../store/index.js';
import type { Logger } from '../telemetry/logger.js';
import { type ExecDeps, runExec } from './exec-action.js';
import { type FetchLimits, runFetch } from './fetch-action.js';
import { type FileContext, fsDelete, fsList, fsRead, fsWrite } from './file-actions.js';
import { ensureWorkspace } from './workspace-lifecycle.js';

/** Everything the workbench host is built from. */
export interface WorkbenchHostDeps {
  db: Db;
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
  log: Logger;
}

/** Per-call options of {@link WorkbenchHost.handleDispatch}. */
export interface DispatchOptions {
  /** Cancels a running `exec` or `fetch`. */
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
 * answer. A bad call never throws past this method.
 */
export class WorkbenchHost {
  constructor(private readonly deps: WorkbenchHostDeps) {}

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

  private async run(envelope: Envelope, options: DispatchOptions): Promise<unknown> {
    const run = await getRun(this.deps.db, envelope.runId);
    if (run === null) {
      throw new WorkbenchError(
        'workspace_owner_unresolved',
        `workspace_owner_unresolved: run "${envelope.runId}" does not exist, so its workspace has no owner; create the run first`,
        { runId: envelope.runId },
      );
    }
    if (isTerminalRunStatus(run.status)) {
      throw new WorkbenchError(
        'run_ended',
        `run_ended: run "${run.id}" ended as "${run.status}" and its workspace is released; start a new run`,
        { runId: run.id, status: run.status },
      );
    }
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
    const files: FileContext = {
      root: ws.dir,
      ...this.deps.files,
      ...(this.deps.fileOwner ? { owner: this.deps.fileOwner } : {}),
    };
    switch (envelope.action) {
      case 'fs_write':
        return fsWrite(files, envelope.args);
      case 'fs_read':
        return fsRead(files, envelope.args);
      case 'fs_list':
        return fsList(files, envelope.args);
      case 'fs_delete':
        return fsDelete(files, envelope.args);
      case 'exec':
        return runExec(this.deps.exec, ws.dir, envelope.args, options);
      case 'fetch':
        return runFetch(files, this.deps.fetch, envelope.args, options.signal);
      case 'promote_artifact':
        throw new WorkbenchError(
          'unavailable',
          'unavailable: promote_artifact is not available on this node yet; read the file with fs_read meanwhile',
        );
      case 'build':
        throw new WorkbenchError(
          'unavailable',
          'unavailable: build is not available on this node: no build runtime is configured',
        );
    }
  }
}
