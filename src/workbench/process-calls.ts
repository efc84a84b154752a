/**
 * The host's side of the `process_*` actions: what a start is checked against (the
 * allowlist, environment names and cwd rules of `exec`, a node whose sandbox keeps
 * processes), the run's workspace held for every call as for a file action (so a
 * replica that takes over a lost holder's workspace marks that holder's processes
 * lost), the warm copy kept while a process runs in it, and the files its processes
 * write synced under the holder's generation (`processes/` says when).
 *
 * @module
 */

import type { Duplex } from 'node:stream';
import type {
  Envelope,
  ProcessStartPayload,
  WorkbenchError as WorkbenchErrorType,
} from '../contract/index.js';
import { WorkbenchError } from '../contract/index.js';
import { BwrapRunner, requireRunner } from '../sandbox/index.js';
import { type Db, getRunForOwner } from '../store/index.js';
import type { Logger } from '../telemetry/index.js';
import { type ExecDeps, prepareExec } from './actions/index.js';
import type { WorkspaceAccess } from './lifecycle/index.js';
import { ProcessActions, type ProcessCommand, ProcessSupervisor } from './processes/index.js';
import type { WarmCache } from './sync/index.js';

/** A person's terminal: a login shell, bash where the sandbox has it. */
const SHELL_COMMAND = 'if [ -x /bin/bash ]; then exec /bin/bash -l; else exec /bin/sh -l; fi';

/** The background-process settings of a node. */
export interface ProcessSettings {
  /** `MEMQL_PROCESS_MAX_PER_RUN`. */
  maxPerRun: number;
  /** `MEMQL_PROCESS_MAX_LIFETIME_MS`. */
  maxLifetimeMs: number;
  /** `MEMQL_PROCESS_SYNC_MS`. */
  syncMs: number;
}

/** Defaults of {@link ProcessSettings}, as the settings table gives them. */
export const DEFAULT_PROCESS_SETTINGS: ProcessSettings = {
  maxPerRun: 8,
  maxLifetimeMs: 86_400_000,
  syncMs: 5000,
};

/** What {@link ProcessCalls} needs of the host. */
export interface ProcessCallsDeps {
  db: Db;
  nodeId: string;
  exec: ExecDeps;
  access: WorkspaceAccess;
  warm: WarmCache;
  settings: ProcessSettings;
  log: Logger;
}

/** A `process_*` envelope. */
export type ProcessEnvelope = Extract<
  Envelope,
  {
    action:
      | 'process_start'
      | 'process_list'
      | 'process_output'
      | 'process_write'
      | 'process_signal'
      | 'process_wait'
      | 'process_resize'
      | 'process_shell';
  }
>;

/** Whether an envelope is a `process_*` call. */
export function isProcessEnvelope(envelope: Envelope): envelope is ProcessEnvelope {
  return envelope.action.startsWith('process_');
}

/** See the module comment. */
export class ProcessCalls {
  readonly supervisor: ProcessSupervisor;
  readonly #actions: ProcessActions;
  readonly #deps: ProcessCallsDeps;

  constructor(deps: ProcessCallsDeps) {
    this.#deps = deps;
    this.supervisor = new ProcessSupervisor({
      db: deps.db,
      nodeId: deps.nodeId,
      maxLivePerRun: deps.settings.maxPerRun,
      maxLifetimeMs: deps.settings.maxLifetimeMs,
      syncMs: deps.settings.syncMs,
      sync: (runId) => this.#syncFiles(runId),
      log: deps.log,
    });
    this.#actions = new ProcessActions({
      db: deps.db,
      supervisor: this.supervisor,
      maxLivePerRun: deps.settings.maxPerRun,
    });
  }

  /** Runs one `process_*` call. */
  handle(envelope: ProcessEnvelope, signal?: AbortSignal): Promise<unknown> {
    const { runId } = envelope;
    // Reads and controls need the run's workspace held here, not the run's lock (a
    // bounded command holds that while it runs): on the holder they go straight on; on
    // another node the workspace is reached as for a file action (a lost holder's is
    // taken over, which ends its processes lost).
    const held = async <T>(work: () => Promise<T>): Promise<T> => {
      const { live } = await this.#deps.access.look(runId);
      if (live?.nodeId === this.#deps.nodeId) return work();
      return this.#deps.access.call(runId, false, async () => work());
    };
    switch (envelope.action) {
      case 'process_start': {
        const { pty, ...args } = envelope.args;
        // The checks of exec: the allowlist, environment names, the cwd, a sandbox at all.
        const { request } = prepareExec(this.#deps.exec, { ...args, timeoutMs: undefined });
        return this.#start(runId, envelope.callId, {
          command: request.command,
          ...(request.cwd !== undefined ? { cwd: request.cwd } : {}),
          ...(request.env ? { env: request.env } : {}),
          ...(pty ? { pty } : {}),
        });
      }
      case 'process_shell': {
        // A person's terminal: the command is ours, so no allowlist; the sandbox holds it.
        const { cols, rows, cwd } = envelope.args;
        return this.#start(runId, envelope.callId, {
          command: SHELL_COMMAND,
          ...(cwd !== undefined ? { cwd } : {}),
          pty: { cols, rows },
          shell: true,
        });
      }
      case 'process_resize':
        return held(() => this.#actions.resize(runId, envelope.args));
      case 'process_list':
        return held(() => this.#actions.list(runId, envelope.args));
      case 'process_output':
        return held(() => this.#actions.output(runId, envelope.args));
      case 'process_write':
        return held(() => this.#actions.write(runId, envelope.args));
      case 'process_signal':
        return held(() => this.#actions.signal(runId, envelope.args));
      case 'process_wait': {
        // The workspace is held for the look; the wait itself holds no lock of the run.
        const { args } = envelope;
        return held(async () => undefined).then(() => this.#actions.wait(runId, args, signal));
      }
    }
  }

  async #start(
    runId: string,
    callId: string | undefined,
    command: ProcessCommand & { pty?: { cols: number; rows: number }; shell?: true },
  ): Promise<ProcessStartPayload> {
    const { exec } = this.#deps;
    const runner = requireRunner(exec.runner);
    if (!(runner instanceof BwrapRunner)) throw noProcessSandbox();
    const { shell: _shell, ...spec } = command;
    const started = await this.#deps.access.call(runId, false, (held, run) =>
      this.#actions.start(run, callId, command, (onOutput) =>
        runner.startProcess({
          workspaceDir: held.dir,
          ...spec,
          reuse: held.stamp,
          memoryLimitBytes: exec.limits.memoryLimitBytes,
          pidsLimit: exec.limits.pidsLimit,
          onOutput,
        }),
      ),
    );
    // Its copy stays warm while it runs (the idle eviction would end its sandbox).
    const ended = started.replayed ? null : this.supervisor.endOf(started.processId);
    if (ended) {
      this.#deps.warm.begin(runId);
      void ended.finally(() => this.#deps.warm.end(runId)).catch(() => undefined);
    }
    return started;
  }

  /**
   * A connection to `port` in the sandbox of the run's background processes on this
   * node, for `ownerUserId`: a run of another user (or none) is `not_found`, whatever
   * runs in it; `port_not_listening` when no process runs, or nothing listens there.
   * The owner of the processes running here decides without a read; the run's row
   * decides when none runs.
   */
  async openPort(runId: string, port: number, ownerUserId: string): Promise<Duplex> {
    const runner = requireRunner(this.#deps.exec.runner);
    if (!(runner instanceof BwrapRunner)) throw noProcessSandbox();
    const owner = this.supervisor.ownerOf(runId);
    const owned =
      owner === null
        ? (await getRunForOwner(this.#deps.db, runId, ownerUserId)) !== null
        : owner === ownerUserId;
    if (!owned) throw new WorkbenchError('not_found', `not_found: run "${runId}" does not exist`);
    return runner.connectPort(this.#deps.access.dirOf(runId), port);
  }

  /** Commits what a run's processes wrote, as the workspace's holder. */
  async #syncFiles(runId: string): Promise<void> {
    const { access } = this.#deps;
    await access.use(
      runId,
      { mutating: false, resolveRun: async () => (await access.look(runId)).run },
      (held) => access.sync(held, { source: 'process' }),
    );
  }
}

function noProcessSandbox(): WorkbenchErrorType {
  return new WorkbenchError(
    'no_sandbox',
    'no_sandbox: background processes live in the run’s bubblewrap sandbox, and this node runs commands with another runner (MEMQL_RUNNER); use exec for bounded commands, or a node with MEMQL_RUNNER=bwrap',
  );
}
