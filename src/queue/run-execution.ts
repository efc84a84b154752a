import { setTimeout as delay } from 'node:timers/promises';
import { type Command, expireCommandLease, finishCommand, getCommand } from '../store/commands.js';
import type { Db } from '../store/db.js';
import { type CommandAudit, commandEventType } from '../telemetry/audit.js';
import type { CommandTelemetry } from '../telemetry/command-telemetry.js';
import {
  type AbortReason,
  decideOutcome,
  type ExecutionEnd,
  isTerminal,
} from './command-outcome.js';
import type { CommandWaiters } from './command-waiters.js';
import { requestStrings, summarizeError } from './error-summary.js';
import type { ExecuteCommand, ExecutionResult } from './execution.js';
import { keepLease } from './lease-keeper.js';

/** How long an aborted executor may take to return before the worker stops waiting. */
export const ABORT_WAIT_MS = 5000;

/** A command a worker is running. */
export interface Execution {
  readonly command: Command;
  /** Settles (never rejects) once the end is recorded, or deliberately not recorded. */
  readonly done: Promise<void>;
  /** Stops the execution; the first reason wins and decides what is recorded. */
  abort(reason: AbortReason): void;
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
  audit: CommandAudit;
  telemetry: CommandTelemetry;
  waiters: CommandWaiters;
  /** Hands a telemetry promise to the queue, which waits for it on stop. */
  track(p: Promise<unknown>): void;
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
  const giveUp = new AbortController();
  const late = new Promise<ExecutionEnd>((resolve) => {
    const onAbort = () => {
      delay(ABORT_WAIT_MS, undefined, { signal: giveUp.signal }).then(
        () =>
          resolve({
            kind: 'error',
            error: new Error(`the executor did not return within ${ABORT_WAIT_MS} ms of an abort`),
          }),
        () => undefined,
      );
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([ended, late]);
  } finally {
    giveUp.abort();
  }
}

/**
 * Runs one claimed command: heartbeats its lease (reading the cancel flag), enforces
 * the worker-side timeout backstop, then records the outcome with a compare-and-set
 * on status and lease owner, the audit event in the same transaction.
 */
export function runExecution(command: Command, deps: ExecutionDeps): Execution {
  const controller = new AbortController();
  let reason: AbortReason | null = null;
  const abort = (why: AbortReason) => {
    if (reason !== null) return;
    reason = why;
    controller.abort(new CommandAbortError(why));
  };
  const secrets = requestStrings(command.request);
  const body = async () => {
    const lease = keepLease({
      db: deps.db,
      commandId: command.id,
      leaseOwner: deps.leaseOwner,
      leaseMs: deps.leaseMs,
      intervalMs: deps.heartbeatMs,
      onLost: () => abort('lease_lost'),
      onCancelRequested: () => abort('cancel'),
      onError: (err) =>
        deps.telemetry.error('heartbeat', { ...summarizeError(err), commandId: command.id }),
    });
    // setTimeout fires at once past 2^31 - 1 ms, so clamp (about 24 days).
    const backstop = setTimeout(
      () => abort('worker_timeout'),
      Math.min(command.timeoutMs + deps.timeoutGraceMs, 2 ** 31 - 1),
    );
    let end: ExecutionEnd;
    try {
      const run = Promise.resolve().then(() =>
        deps.execute(command, {
          signal: controller.signal,
          onOutput: (stream, chunk) => deps.waiters.emitOutput(command.id, stream, chunk),
        }),
      );
      end = await settle(run, controller.signal);
    } finally {
      clearTimeout(backstop);
      await lease.stop();
    }
    if (end.kind === 'error' && reason === null) {
      deps.telemetry.error('execute', {
        ...summarizeError(end.error, secrets),
        commandId: command.id,
      });
    }
    const outcome = decideOutcome(end, reason, deps.outputLimitBytes);
    if (outcome === null) {
      if (reason === 'shutdown') {
        // Hand it to stale recovery now rather than after a whole lease.
        await expireCommandLease(deps.db, command.id, deps.leaseOwner).catch(() => false);
        deps.telemetry.note('workspace_command.abandoned', command);
      } else {
        deps.telemetry.note('workspace_command.lease_lost', command);
      }
      return;
    }
    let row: Command | null = null;
    for (let attempt = 1; ; attempt++) {
      try {
        row = await deps.db.transaction(async (tx) => {
          const r = await finishCommand(tx, command.id, deps.leaseOwner, outcome);
          if (r) await deps.audit.record(tx, commandEventType(r.status), r);
          return r;
        });
        break;
      } catch (err) {
        deps.telemetry.error('finish', { ...summarizeError(err), commandId: command.id });
        // Past three tries the lease lapses and stale recovery ends the command.
        if (attempt >= 3) return;
        await delay(200 * attempt);
      }
    }
    if (row === null) {
      const current = await getCommand(deps.db, command.id).catch(() => null);
      deps.telemetry.note('workspace_command.finish_rejected', current ?? command);
      if (current && isTerminal(current)) deps.waiters.settle(current);
      return;
    }
    deps.track(deps.telemetry.moved(commandEventType(row.status), row));
    deps.waiters.settle(row);
  };
  const done = body().catch((err: unknown) => {
    deps.telemetry.error('execution', { ...summarizeError(err, secrets), commandId: command.id });
  });
  return { command, done, abort };
}
