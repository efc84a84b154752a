/**
 * The background processes a workbench node runs, between the sandbox and the store:
 * each start is recorded first (within the run's cap, once per `callId`), then the
 * sandbox starts it, its output is pumped to the store as it comes
 * (`process-output.ts`), and its end is recorded once that output is stored: `exited`
 * with its code, `killed` with the signal that ended it (a signal, the run's end), or
 * `node_stopping` when this node's stop ended its sandbox. Processes of an earlier
 * process of this node are lost ({@link ProcessSupervisor.loseLeftovers}): nothing of
 * them runs any more.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import type { OutputSink } from '../../contract/index.js';
import type { ProcessExit, SessionProcess } from '../../sandbox/index.js';
import {
  type Db,
  endProcess,
  loseProcesses,
  type ProcessOutcome,
  type ProcessRow,
  type ProcessStart,
  startProcess,
} from '../../store/index.js';
import type { Logger } from '../../telemetry/index.js';
import { ProcessOutput } from './process-output.js';

/** Options of {@link ProcessSupervisor}. */
export interface ProcessSupervisorOptions {
  readonly db: Db;
  readonly nodeId: string;
  /** Most processes one run may have running. */
  readonly maxLivePerRun: number;
  /** How often output reaches the store at the latest, ms (default 200). */
  readonly flushMs?: number;
  /** Longest a process runs before it is killed (`SIGKILL`), ms. Default: no limit. */
  readonly maxLifetimeMs?: number;
  /**
   * Syncs a run's files to durable storage: every `syncMs` for each run with a process
   * running here, and once a process has ended and its output is stored, before its end
   * is recorded (so an end that is seen has its files kept). A failure is logged; the
   * end is recorded anyway.
   */
  readonly sync?: (runId: string) => Promise<void>;
  /** Period of the sync while processes run, ms. Default 5000. */
  readonly syncMs?: number;
  readonly log: Logger;
}

/** What a start records. */
export interface ProcessRequest {
  readonly runId: string;
  readonly ownerUserId: string;
  readonly callId?: string | null;
  /** What started it (command, cwd, env, pty): recorded with it. */
  readonly request: Record<string, unknown>;
}

/** What {@link ProcessSupervisor.start} did: the store's answer, and for a new process its end. */
export type SupervisedStart =
  | (Extract<ProcessStart, { kind: 'started' }> & {
      /** Resolves with its row once its end (and all its output) is recorded. */
      readonly ended: Promise<ProcessRow | null>;
    })
  | Exclude<ProcessStart, { kind: 'started' }>;

interface Running {
  readonly runId: string;
  readonly ownerUserId: string;
  readonly handle: SessionProcess;
  readonly output: ProcessOutput;
  /** Resolves once its end is recorded. */
  ended?: Promise<ProcessRow | null>;
  /** It ran the maximum lifetime and was sent SIGKILL. */
  expired?: boolean;
}

/** See the module comment. */
export class ProcessSupervisor {
  readonly #o: ProcessSupervisorOptions;
  readonly #running = new Map<string, Running>();
  #stopping = false;
  #syncTimer: NodeJS.Timeout | null = null;

  constructor(options: ProcessSupervisorOptions) {
    this.#o = options;
  }

  /**
   * Records a process and starts it with `launch` (the sandbox's start, given the sink
   * for its output). A launch that fails is recorded `killed` and rethrown.
   */
  async start(
    request: ProcessRequest,
    launch: (onOutput: OutputSink) => Promise<SessionProcess>,
  ): Promise<SupervisedStart> {
    const { db, nodeId, log } = this.#o;
    const id = `proc-${randomUUID()}`;
    const recorded = await startProcess(
      db,
      {
        id,
        runId: request.runId,
        ownerUserId: request.ownerUserId,
        nodeId,
        callId: request.callId ?? null,
        request: request.request,
      },
      this.#o.maxLivePerRun,
    );
    if (recorded.kind !== 'started') return recorded;
    const output = new ProcessOutput({
      db,
      processId: id,
      log,
      ...(this.#o.flushMs !== undefined ? { flushMs: this.#o.flushMs } : {}),
    });
    let handle: SessionProcess;
    try {
      handle = await launch(output.write);
    } catch (err) {
      await output.close();
      await endProcess(db, id, nodeId, { status: 'killed' }).catch(() => null);
      throw err;
    }
    const running: Running = {
      runId: request.runId,
      ownerUserId: request.ownerUserId,
      handle,
      output,
    };
    this.#running.set(id, running);
    const lifetime =
      this.#o.maxLifetimeMs === undefined
        ? null
        : setTimeout(() => {
            log.info({ processId: id, runId: request.runId }, 'process ran its maximum lifetime');
            running.expired = true;
            handle.signal('SIGKILL');
          }, this.#o.maxLifetimeMs);
    lifetime?.unref();
    const ended = handle.ended.then((exit) => {
      if (lifetime) clearTimeout(lifetime);
      return this.#record(id, request.runId, output, exit, running);
    });
    running.ended = ended;
    this.#scheduleSync();
    return { ...recorded, ended };
  }

  /** Resolves with the row once the end of a process of this node is recorded; null when not here. */
  endOf(processId: string): Promise<ProcessRow | null> | null {
    return this.#running.get(processId)?.ended ?? null;
  }

  /** The recorded ends of `runId`'s processes running here now. */
  endsIn(runId: string): Promise<ProcessRow | null>[] {
    return [...this.#running.values()]
      .filter((r) => r.runId === runId && r.ended !== undefined)
      .map((r) => r.ended!);
  }

  /** How many processes of `runId` run here. */
  liveIn(runId: string): number {
    let n = 0;
    for (const r of this.#running.values()) if (r.runId === runId) n += 1;
    return n;
  }

  /** The owner of `runId`'s processes running here; null when none runs here. */
  ownerOf(runId: string): string | null {
    for (const r of this.#running.values()) if (r.runId === runId) return r.ownerUserId;
    return null;
  }

  /** The runs that have a process running here. */
  runs(): Set<string> {
    return new Set([...this.#running.values()].map((r) => r.runId));
  }

  /**
   * Ends every process of this node for its stop: `SIGTERM` to each, `SIGKILL` to what
   * is left after `graceMs`; resolves once every end is recorded (`node_stopping`).
   */
  async endAll(graceMs: number): Promise<void> {
    this.stopping();
    const all = [...this.#running.values()];
    if (all.length === 0) return;
    for (const r of all) r.handle.signal('SIGTERM');
    const ends = Promise.all(all.map((r) => r.ended));
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace'>((resolve) => {
      timer = setTimeout(() => resolve('grace'), graceMs);
    });
    const first = await Promise.race([ends, graceOver]);
    clearTimeout(timer);
    if (first === 'grace') {
      for (const r of this.#running.values()) r.handle.signal('SIGKILL');
      await ends;
    }
  }

  /** The process's sandbox handle, when it runs on this node. */
  local(processId: string): SessionProcess | null {
    return this.#running.get(processId)?.handle ?? null;
  }

  /**
   * Stores the output a process of this node has written so far (a reader that must see
   * it, rather than wait a flush); resolves at once for a process not running here.
   */
  async flush(processId: string): Promise<void> {
    await this.#running.get(processId)?.output.flush();
  }

  /** How many processes run here. */
  get running(): number {
    return this.#running.size;
  }

  /** From now on, a process whose sandbox ends under it ended with the node's stop. */
  stopping(): void {
    this.#stopping = true;
  }

  /** Marks the processes an earlier process of this node left `lost`; returns them. */
  loseLeftovers(): Promise<ProcessRow[]> {
    return loseProcesses(this.#o.db, this.#o.nodeId);
  }

  /** Syncs `runId`'s files, logging a failure (the next sync tries again). */
  async #sync(runId: string): Promise<void> {
    await this.#o.sync?.(runId).catch((err: unknown) => {
      this.#o.log.warn(
        { err, runId },
        "a run's files written by its processes could not be synced",
      );
    });
  }

  /** Keeps a sync of every run with a process here every `syncMs` while any runs. */
  #scheduleSync(): void {
    if (this.#o.sync === undefined || this.#syncTimer !== null) return;
    this.#syncTimer = setTimeout(async () => {
      for (const runId of this.runs()) await this.#sync(runId);
      this.#syncTimer = null;
      if (this.#running.size > 0) this.#scheduleSync();
    }, this.#o.syncMs ?? 5000);
    this.#syncTimer.unref();
  }

  async #record(
    id: string,
    runId: string,
    output: ProcessOutput,
    exit: ProcessExit,
    running: Running,
  ): Promise<ProcessRow | null> {
    await output.close();
    // Its files are synced before its end is seen, unless the run is held by something
    // long (a bounded command, whose own sync keeps them): then the end waits at most a
    // sync period, and the sync goes on after it.
    let waited: NodeJS.Timeout | undefined;
    await Promise.race([
      this.#sync(runId),
      new Promise<void>((resolve) => {
        waited = setTimeout(resolve, this.#o.syncMs ?? 5000);
      }),
    ]);
    clearTimeout(waited);
    this.#running.delete(id);
    // During the node's stop every end is the stop's: the process had its grace.
    const outcome: ProcessOutcome = this.#stopping
      ? {
          status: 'node_stopping',
          exitCode: exit.exitCode,
          signal: exit.signal,
          errorCode: 'node_stopping',
        }
      : exit.lost
        ? { status: 'killed' }
        : exit.signal !== null
          ? {
              status: 'killed',
              signal: exit.signal,
              ...(running.expired ? { errorCode: 'process_lifetime' as const } : {}),
            }
          : { status: 'exited', exitCode: exit.exitCode };
    for (let attempt = 0; ; attempt++) {
      try {
        return await endProcess(this.#o.db, id, this.#o.nodeId, outcome);
      } catch (err) {
        if (attempt === 0) {
          this.#o.log.warn({ err, processId: id }, 'a process end could not be recorded; retrying');
        }
        await new Promise((r) => setTimeout(r, Math.min(2000, 50 * 2 ** Math.min(attempt, 6))));
      }
    }
  }
}
