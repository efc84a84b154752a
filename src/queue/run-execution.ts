import { setTimeout as delay } from 'node:timers/promises';
import { WorkbenchError } from '../contract/index.js';
import type { Db } from '../store/index.js';
import {
  type ClaimWithFinish,
  type Command,
  type CommandOutcome,
  finishAndClaim,
  getCommand,
  markCommandBegan,
  requeueCommands,
} from '../store/index.js';
import { commandEventType } from './command-audit.js';
import {
  type AbortReason,
  decideOutcome,
  type ExecutionEnd,
  isTerminal,
  shouldRequeue,
} from './command-outcome.js';
import type { CommandTelemetry } from './command-telemetry.js';
import type { CommandWaiters } from './command-waiters.js';
import { requestStrings, summarizeError } from './error-summary.js';
import type { ExecuteCommand, ExecutionResult } from './execution.js';
import { keepLease } from './lease-keeper.js';

/** How long an aborted executor may take to return before the worker stops waiting. */
export const ABORT_WAIT_MS = 5000;

/**
 * How long recording a command's outcome may keep failing before callers waiting on
 * it are told it will be recorded later (a brief blip is ridden out silently).
 */
export const PENDING_NOTICE_MS = 2000;

/** The longest pause between two attempts to record an outcome, ms. */
const RECORD_BACKOFF_MAX_MS = 2000;

/** A command a worker is running. */
export interface Execution {
  readonly command: Command;
  /** Settles (never rejects) once the end is recorded, or deliberately not recorded. */
  readonly done: Promise<void>;
  /** Stops the execution; the first reason wins and decides what is recorded. */
  abort(reason: AbortReason): void;
  /**
   * The commands its worker claimed with its finish (see `ExecutionDeps.claimNext`), to
   * run in its slot; read once `done` settled.
   */
  readonly claimed: readonly Command[];
}

/** What {@link runExecution} needs from its queue. */
export interface ExecutionDeps {
  db: Db;
  leaseOwner: string;
  leaseMs: number;
  heartbeatMs: number;
  timeoutGraceMs: number;
  outputLimitBytes: number;
  execute: ExecuteCommand;
  /** The executor calls `ctx.begin()` itself (else it is called before `execute`). */
  executorMarksBegin: boolean;
  telemetry: CommandTelemetry;
  waiters: CommandWaiters;
  /** Hands a telemetry promise to the queue, which waits for it on stop. */
  track(p: Promise<unknown>): void;
  /**
   * Aborted when the queue gives up on recording at shutdown (the database stayed
   * unreachable past the grace): the command is then left to recovery.
   */
  halted: AbortSignal;
  /**
   * Asked as the outcome is recorded: what the worker claims in the same statement for
   * the slot this command frees (undefined: nothing).
   */
  claimNext?(): ClaimWithFinish | undefined;
}

/**
 * Tells waiting callers once recording has kept failing for {@link PENDING_NOTICE_MS};
 * silent for a blip that passes sooner.
 */
function pendingNotice(deps: ExecutionDeps, command: Command) {
  let timer: NodeJS.Timeout | undefined;
  let last: { exitCode: number | null; reason: string } = { exitCode: null, reason: '' };
  return {
    failed(exitCode: number | null, err: unknown) {
      last = { exitCode, reason: summarizeError(err).errorMessage };
      timer ??= setTimeout(
        () => deps.waiters.pending({ commandId: command.id, ...last }),
        PENDING_NOTICE_MS,
      );
    },
    clear() {
      clearTimeout(timer);
    },
  };
}

/** The abort reason an executor sees on `signal.reason`. */
export class CommandAbortError extends Error {
  override readonly name = 'AbortError';
  constructor(readonly reason: AbortReason) {
    super(`command aborted: ${reason}`);
  }
}

/**
 * Waits for the executor; once aborted, waits at most {@link ABORT_WAIT_MS} more, so a
 * stuck executor cannot hold a slot (or a shutdown) forever.
 */
async function settle(run: Promise<ExecutionResult>, signal: AbortSignal): Promise<ExecutionEnd> {
  const ended = run.then(
    (result): ExecutionEnd => ({ kind: 'result', result }),
    (error: unknown): ExecutionEnd => ({ kind: 'error', error }),
  );
  // A plain timer, not an abortable delay: ending it costs no error object per command.
  let giveUp: NodeJS.Timeout | undefined;
  const late = new Promise<ExecutionEnd>((resolve) => {
    const onAbort = () => {
      giveUp = setTimeout(
        () =>
          resolve({
            kind: 'error',
            error: new Error(`the executor did not return within ${ABORT_WAIT_MS} ms of an abort`),
          }),
        ABORT_WAIT_MS,
      );
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([ended, late]);
  } finally {
    clearTimeout(giveUp);
  }
}

/**
 * Runs a statement that moves the command on, retrying with backoff for as long as it
 * fails (a database outage) unless the queue halts; null when it halted first.
 */
async function retrying<T>(
  command: Command,
  deps: ExecutionDeps,
  step: string,
  statement: () => Promise<T>,
  onFailure: (err: unknown) => void = () => undefined,
): Promise<T | null> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await statement();
    } catch (err) {
      deps.telemetry.error(step, { ...summarizeError(err), commandId: command.id });
      onFailure(err);
      if (deps.halted.aborted) return null;
      const pause = Math.min(RECORD_BACKOFF_MAX_MS, 100 * 2 ** Math.min(attempt, 10));
      await delay(pause, undefined, { signal: deps.halted }).catch(() => undefined);
    }
  }
}

/**
 * Records the outcome with a compare-and-set on status and lease owner, the audit
 * event in the same statement, retrying through outages (see {@link retrying}). Null
 * when the row was no longer this worker's to finish, or when the queue halted first.
 */
async function record(
  command: Command,
  outcome: CommandOutcome,
  deps: ExecutionDeps,
  notice: ReturnType<typeof pendingNotice>,
): Promise<{ row: Command | null; recorded: boolean; claimed: Command[] }> {
  const done = await retrying(
    command,
    deps,
    'finish',
    () => finishAndClaim(deps.db, command.id, deps.leaseOwner, outcome, deps.claimNext?.()),
    (err) => notice.failed(outcome.exitCode ?? null, err),
  );
  if (done === null) return { row: null, recorded: false, claimed: [] };
  return { row: done.row, recorded: done.row !== null, claimed: done.claimed };
}

/**
 * Puts a command that never began back in the queue (or ends it `cancelled`, when a
 * cancel was asked for meanwhile), retrying through outages, and tells whoever waits.
 */
async function putBack(command: Command, deps: ExecutionDeps): Promise<void> {
  const rows = await retrying(command, deps, 'requeue', () =>
    requeueCommands(deps.db, [{ id: command.id, leaseOwner: deps.leaseOwner }]),
  );
  const row = rows?.[0];
  if (row?.status === 'queued') {
    deps.telemetry.note('workspace_command.requeued', row);
    return;
  }
  if (row) {
    deps.track(deps.telemetry.moved(commandEventType(row.status), row));
    deps.waiters.settle(row);
    return;
  }
  const current = await getCommand(deps.db, command.id).catch(() => null);
  deps.telemetry.note('workspace_command.finish_rejected', current ?? command);
  if (current && isTerminal(current)) deps.waiters.settle(current);
}

/** The refusal of a command that could not be marked begun because the database did not answer. */
function notStarted(command: Command, err: unknown): WorkbenchError {
  return new WorkbenchError(
    'unavailable',
    `unavailable: the database did not answer before command ${command.id} could start; it was not started and is queued again`,
    { reason: 'not_started', cause: summarizeError(err).errorMessage },
  );
}

/**
 * Runs one claimed command: heartbeats its lease (reading the cancel flag) until its
 * outcome is recorded, enforces the worker-side timeout backstop, then records the
 * outcome, retrying through database outages: a command that ran keeps its real
 * outcome. Waiting callers hear, if recording stays stuck, that it will come later.
 */
export function runExecution(command: Command, deps: ExecutionDeps): Execution {
  const controller = new AbortController();
  let reason: AbortReason | null = null;
  let ran = false;
  let began = false;
  let ranExit: number | null = null;
  const abort = (why: AbortReason) => {
    if (reason !== null) return;
    // Once the command has run, only losing the worker stops the executor's recording.
    if (ran && (why === 'cancel' || why === 'worker_timeout')) return;
    reason = why;
    controller.abort(new CommandAbortError(why));
  };
  const secrets = requestStrings(command.request);
  const notice = pendingNotice(deps, command);
  const begin = async () => {
    if (began) return;
    controller.signal.throwIfAborted();
    let held: boolean;
    try {
      held = await markCommandBegan(deps.db, command.id, deps.leaseOwner);
    } catch (err) {
      throw notStarted(command, err);
    }
    if (!held) {
      abort('lease_lost');
      throw new CommandAbortError('lease_lost');
    }
    began = true;
  };
  const body = async () => {
    const lease = keepLease({
      db: deps.db,
      commandId: command.id,
      leaseOwner: deps.leaseOwner,
      leaseMs: deps.leaseMs,
      intervalMs: deps.heartbeatMs,
      onLost: () => abort('lease_lost'),
      onCancelRequested: () => abort('cancel'),
      onError: (err) => {
        deps.telemetry.error('heartbeat', { ...summarizeError(err), commandId: command.id });
      },
    });
    try {
      // setTimeout fires at once past 2^31 - 1 ms, so clamp (about 24 days).
      const backstop = setTimeout(
        () => abort('worker_timeout'),
        Math.min(command.timeoutMs + deps.timeoutGraceMs, 2 ** 31 - 1),
      );
      let end: ExecutionEnd;
      try {
        const run = Promise.resolve().then(async () => {
          if (!deps.executorMarksBegin) await begin();
          return deps.execute(command, {
            begin,
            signal: controller.signal,
            onOutput: (stream, chunk) => deps.waiters.emitOutput(command.id, stream, chunk),
            ran: (exitCode) => {
              ran = true;
              ranExit = exitCode;
            },
            stopping: () => reason === 'shutdown' || reason === 'lease_lost',
            recordingDelayed: (err) => notice.failed(ranExit, err),
          });
        });
        end = await settle(run, controller.signal);
      } finally {
        clearTimeout(backstop);
      }
      if (reason !== 'lease_lost' && shouldRequeue(end, reason, began, command.attempts)) {
        // It never began: nothing of it ran, so it goes back to the queue, not to "lost".
        await putBack(command, deps);
        return;
      }
      if (end.kind === 'error' && reason === null) {
        deps.telemetry.error('execute', {
          ...summarizeError(end.error, secrets),
          commandId: command.id,
        });
      }
      const outcome = decideOutcome(end, reason, deps.outputLimitBytes);
      if (outcome === null) {
        deps.telemetry.note('workspace_command.lease_lost', command);
        return;
      }
      const { row, recorded, claimed: next } = await record(command, outcome, deps, notice);
      claimed.push(...next);
      if (!recorded) {
        const current = await getCommand(deps.db, command.id).catch(() => null);
        deps.telemetry.note(
          deps.halted.aborted && current?.status === 'running'
            ? 'workspace_command.abandoned'
            : 'workspace_command.finish_rejected',
          current ?? command,
        );
        if (current && isTerminal(current)) deps.waiters.settle(current);
        return;
      }
      deps.track(deps.telemetry.moved(commandEventType(row!.status), row!));
      deps.waiters.settle(row!);
    } finally {
      notice.clear();
      await lease.stop();
    }
  };
  const claimed: Command[] = [];
  const done = body().catch((err: unknown) => {
    deps.telemetry.error('execution', { ...summarizeError(err, secrets), commandId: command.id });
  });
  return { command, done, abort, claimed };
}
