/**
 * The `process_*` actions on a run, once the host has checked the call and holds the
 * run's workspace: a start within the run's cap (the same `callId` gives the same
 * process; another call under it is `call_id_conflict`), reads of the run's processes
 * and their output from the store (any replica's, after they ended, after their
 * replica was lost), and the controls (stdin, signals) of a process that runs on this
 * node. A wait ends with the process, at its time limit, or when the caller goes away.
 *
 * @module
 */

import {
  type ActionArgs,
  isCallerGone,
  isNodeStopping,
  type OutputSink,
  type ProcessOutputPayload,
  type ProcessStartPayload,
  type ProcessView,
  type ProcessWritePayload,
  WorkbenchError,
} from '../../contract/index.js';
import type { SessionProcess } from '../../sandbox/index.js';
import {
  type Db,
  getProcess,
  listRunProcesses,
  type ProcessRow,
  readProcessOutput,
} from '../../store/index.js';
import type { ProcessSupervisor } from './process-supervisor.js';

/** How often a wait for a process of another node looks at its row, ms. */
const REMOTE_WAIT_POLL_MS = 250;

/** What a process records of its start: the call's own fields. */
export interface ProcessCommand {
  readonly command: string;
  readonly cwd?: string;
  readonly env?: Record<string, string>;
  /** Its terminal's size when it has one. */
  readonly pty?: { readonly cols: number; readonly rows: number };
  /** A person's shell (`process_shell`). */
  readonly shell?: true;
}

/** A process row as the actions answer it. */
export function processView(row: ProcessRow): ProcessView {
  const request = row.request as { command?: unknown; cwd?: unknown; pty?: unknown };
  return {
    processId: row.id,
    runId: row.runId,
    status: row.status,
    errorCode: row.errorCode,
    command: typeof request.command === 'string' ? request.command : '',
    cwd: typeof request.cwd === 'string' ? request.cwd : '.',
    pty: request.pty !== undefined && request.pty !== null,
    exitCode: row.exitCode,
    signal: row.signal,
    stdoutBytes: row.stdoutBytes,
    stderrBytes: row.stderrBytes,
    startedAt: row.startedAt.toISOString(),
    endedAt: row.endedAt?.toISOString() ?? null,
    durationMs:
      row.endedAt === null ? null : Math.max(0, row.endedAt.getTime() - row.startedAt.getTime()),
  };
}

function sameCommand(recorded: Record<string, unknown>, asked: ProcessCommand): boolean {
  const env = (e: unknown) => JSON.stringify(Object.entries(e ?? {}).sort());
  return (
    recorded.command === asked.command &&
    JSON.stringify(recorded.pty ?? null) === JSON.stringify(asked.pty ?? null) &&
    (recorded.cwd ?? '.') === (asked.cwd ?? '.') &&
    env(recorded.env) === env(asked.env)
  );
}

/** Options of {@link ProcessActions}. */
export interface ProcessActionsOptions {
  readonly db: Db;
  readonly supervisor: ProcessSupervisor;
  /** `MEMQL_PROCESS_MAX_PER_RUN`, named in the `process_limit` refusal. */
  readonly maxLivePerRun: number;
}

/** See the module comment. */
export class ProcessActions {
  readonly #o: ProcessActionsOptions;

  constructor(options: ProcessActionsOptions) {
    this.#o = options;
  }

  /** Starts a process of `run` with `launch` (the sandbox's start); see the module comment. */
  async start(
    run: { id: string; ownerUserId: string },
    callId: string | undefined,
    command: ProcessCommand,
    launch: (onOutput: OutputSink) => Promise<SessionProcess>,
  ): Promise<ProcessStartPayload> {
    const started = await this.#o.supervisor.start(
      {
        runId: run.id,
        ownerUserId: run.ownerUserId,
        callId: callId ?? null,
        request: { ...command },
      },
      launch,
    );
    if (started.kind === 'limit') {
      throw new WorkbenchError(
        'process_limit',
        `process_limit: run "${run.id}" has ${started.live} background processes running, the most this node allows (MEMQL_PROCESS_MAX_PER_RUN=${this.#o.maxLivePerRun}); end one with process_signal or wait for one with process_wait, then start again`,
        { running: started.live, limit: this.#o.maxLivePerRun },
      );
    }
    if (started.kind === 'replayed' && !sameCommand(started.process.request, command)) {
      throw new WorkbenchError(
        'call_id_conflict',
        `call_id_conflict: callId "${callId}" already started process ${started.process.id} with another command; use a new callId for a new process`,
        { callId, processId: started.process.id },
      );
    }
    return { ...processView(started.process), replayed: started.kind === 'replayed' };
  }

  /** The run's processes, newest first. */
  async list(
    runId: string,
    args: ActionArgs<'process_list'>,
  ): Promise<{ processes: ProcessView[] }> {
    const rows = await listRunProcesses(this.#o.db, runId, {
      limit: args.limit,
      ...(args.running ? { status: 'running' as const } : {}),
    });
    return { processes: rows.map(processView) };
  }

  /** A piece of a process's stream; what it wrote until now is stored first when it runs here. */
  async output(runId: string, args: ActionArgs<'process_output'>): Promise<ProcessOutputPayload> {
    const row = await this.#own(runId, args.processId);
    await this.#o.supervisor.flush(row.id);
    const read = await readProcessOutput(
      this.#o.db,
      row.id,
      args.stream,
      args.offset,
      args.maxBytes,
    );
    if (read === null) throw notFound(runId, args.processId);
    // A UTF-8 read ends before a character cut in two; the next read starts there.
    let bytes = read.bytes;
    if (args.encoding === 'utf8') bytes = bytes.subarray(0, wholeUtf8(bytes, read.complete));
    const next = read.offset + bytes.length;
    return {
      processId: row.id,
      stream: args.stream,
      data: bytes.toString(args.encoding),
      encoding: args.encoding,
      offset: read.offset,
      next,
      total: read.total,
      complete: read.complete && next >= read.total,
      status: read.status,
    };
  }

  /** Writes to a running process's standard input. */
  async write(runId: string, args: ActionArgs<'process_write'>): Promise<ProcessWritePayload> {
    const { handle } = await this.#control(runId, args.processId);
    const bytes = Buffer.from(args.stdin ?? '', 'utf8');
    if (bytes.length > 0) handle.write(bytes);
    if (args.eof) handle.endInput();
    return { processId: args.processId, written: bytes.length, eof: args.eof };
  }

  /** Resizes a running process's terminal. */
  async resize(runId: string, args: ActionArgs<'process_resize'>): Promise<ProcessView> {
    const { row, handle } = await this.#control(runId, args.processId);
    handle.resize(args.cols, args.rows);
    return processView(row);
  }

  /** Signals a running process's process group. */
  async signal(runId: string, args: ActionArgs<'process_signal'>): Promise<ProcessView> {
    const { row, handle } = await this.#control(runId, args.processId);
    handle.signal(args.signal);
    return processView(row);
  }

  /** Waits for a process's end, at most `timeoutMs` or until `signal` aborts. */
  async wait(
    runId: string,
    args: ActionArgs<'process_wait'>,
    signal?: AbortSignal,
  ): Promise<ProcessView> {
    const row = await this.#own(runId, args.processId);
    if (row.status !== 'running' || args.timeoutMs === 0) return processView(row);
    const local = this.#o.supervisor.endOf(row.id);
    const cleanups: (() => void)[] = [];
    try {
      const over = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, args.timeoutMs);
        cleanups.push(() => clearTimeout(timer));
        if (signal) {
          const onAbort = () => resolve();
          signal.addEventListener('abort', onAbort, { once: true });
          cleanups.push(() => signal.removeEventListener('abort', onAbort));
        }
      });
      if (local) {
        await Promise.race([local, over]);
      } else {
        let done = false;
        void over.then(() => {
          done = true;
        });
        while (!done) {
          const now = await getProcess(this.#o.db, row.id);
          if (now === null || now.status !== 'running') break;
          await Promise.race([over, new Promise((r) => setTimeout(r, REMOTE_WAIT_POLL_MS))]);
        }
      }
    } finally {
      for (const cleanup of cleanups) cleanup();
    }
    if (signal?.aborted) throw waitEnded(row.id, signal.reason);
    return processView(await this.#own(runId, args.processId));
  }

  /** The process's row, when it is one of `runId`'s. */
  async #own(runId: string, processId: string): Promise<ProcessRow> {
    const row = await getProcess(this.#o.db, processId);
    if (row === null || row.runId !== runId) throw notFound(runId, processId);
    return row;
  }

  /** A running process of `runId` on this node: its row and its handle. */
  async #control(
    runId: string,
    processId: string,
  ): Promise<{ row: ProcessRow; handle: SessionProcess }> {
    const row = await this.#own(runId, processId);
    const handle = this.#o.supervisor.local(processId);
    if (row.status === 'running' && handle !== null) return { row, handle };
    if (row.status === 'running') {
      throw new WorkbenchError(
        'unavailable',
        `unavailable: process ${processId} runs on node "${row.nodeId}", which does not hold run "${runId}"'s workspace now; retry shortly`,
        { processId, nodeId: row.nodeId, reason: 'process_elsewhere' },
      );
    }
    throw new WorkbenchError(
      'process_not_running',
      `process_not_running: process ${processId} has ended (${row.status}); it takes no input or signal. Read what it wrote with process_output, or start it again with process_start`,
      { processId, status: row.status },
    );
  }
}

function notFound(runId: string, processId: string): WorkbenchError {
  return new WorkbenchError(
    'process_not_found',
    `process_not_found: run "${runId}" has no background process "${processId}"; process_list names its processes`,
    { processId },
  );
}

/**
 * How many of `bytes` make whole UTF-8 characters: all of them when `atEnd` (nothing more
 * will come, so a cut character stays as it is), else up to the last character that is cut.
 */
function wholeUtf8(bytes: Buffer, atEnd: boolean): number {
  if (atEnd || bytes.length === 0) return bytes.length;
  // Look back at most 3 bytes for the lead byte of the last character.
  for (let back = 1; back <= Math.min(4, bytes.length); back++) {
    const b = bytes[bytes.length - back]!;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    // A read too short for even one character gives what it has rather than nothing.
    if (need > back) return back === bytes.length ? bytes.length : bytes.length - back;
    return bytes.length;
  }
  return bytes.length;
}

/**
 * The answer of a wait whose call ended first: its caller went away, its node stops, or
 * it was aborted. The process goes on; nobody may be reading this, and it is no fault.
 */
function waitEnded(processId: string, reason: unknown): WorkbenchError {
  const why = isCallerGone(reason)
    ? 'caller_gone'
    : isNodeStopping(reason)
      ? 'node_stopping'
      : 'aborted';
  return new WorkbenchError(
    'unavailable',
    `unavailable: the wait for process ${processId} ended before the process did (${why}); the process goes on: wait again with process_wait`,
    { processId, reason: why },
  );
}
