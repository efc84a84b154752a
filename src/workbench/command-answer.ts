/**
 * How a call that queued a command (`exec`, `build`) waits for its end and answers it.
 * The caller's explicit cancel cancels the command. Neither the caller going away nor
 * the node stopping does (`abortDetaches`): the command is left to run, here or on the
 * workspace's next holder, and the call then answers how to find the outcome.
 *
 * @module
 */

import { setTimeout as delay } from 'node:timers/promises';
import {
  abortDetaches,
  type ExecPayload,
  isCallerGone,
  type OutputSink,
  WorkbenchError,
} from '../contract/index.js';
import { type CommandQueue, isTerminal } from '../queue/index.js';
import { type Command, type Db, getCommand } from '../store/index.js';
import type { Logger } from '../telemetry/index.js';
import { execPayload } from './actions/index.js';

/** What {@link awaitCommand} needs from the host. */
export interface CommandAnswerDeps {
  queue: CommandQueue;
  db: Db;
  nodeId: string;
  /** How often a handed-off command's row is read again, ms. */
  pollIntervalMs: number;
  /** How long a call follows a handed-off command, ms. */
  handoffWaitMs: number;
  log: Logger;
}

/**
 * Reads a command's row until it is terminal, `signal` aborts, or the handoff wait
 * passes; null unless it ended. For a call whose command a stopping node left queued.
 */
async function followCommand(
  deps: CommandAnswerDeps,
  commandId: string,
  signal: AbortSignal,
): Promise<Command | null> {
  const deadline = performance.now() + deps.handoffWaitMs;
  while (!signal.aborted && performance.now() < deadline) {
    const row = await getCommand(deps.db, commandId).catch(() => null);
    if (row && isTerminal(row)) return row;
    await delay(deps.pollIntervalMs, undefined, { signal }).catch(() => undefined);
  }
  return null;
}

/** The call's side of the wait: its abort signal and where its live output goes. */
export interface CommandCallOptions {
  signal?: AbortSignal;
  onOutput?: OutputSink;
}

/** Waits for a queued command's end and answers it (see the module comment). */
export async function awaitCommand(
  deps: CommandAnswerDeps,
  command: Command,
  options: CommandCallOptions,
): Promise<ExecPayload> {
  const { queue } = deps;
  const commandId = command.id;
  const stopped = new AbortController();
  const onAbort = () => {
    if (abortDetaches(options.signal?.reason)) stopped.abort();
    else
      queue.cancel(commandId).catch((err: unknown) => {
        // Never an unhandled rejection: the command then runs to its end or its limit.
        deps.log.warn(
          { commandId, err: (err as Error).message },
          'the caller went away but its command could not be cancelled',
        );
      });
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const done = await queue.waitForTerminal(commandId, {
      row: command,
      signal: stopped.signal,
      ...(options.onOutput ? { onOutput: options.onOutput } : {}),
    });
    return execPayload(done);
  } catch (err) {
    if (isCallerGone(options.signal?.reason)) {
      // Nobody waits for this answer; the command goes on and is recorded when it ends.
      throw new WorkbenchError(
        'unavailable',
        `unavailable: the caller went away while command ${commandId} was queued or running; it goes on. Read its outcome with GET /v1/commands/${commandId}, or repeat the call with the same callId`,
        { commandId, reason: 'caller_gone' },
      );
    }
    if (!stopped.signal.aborted && queue.lifecycle === 'stopped') {
      // This node handed the workspace off with the command still queued: the next
      // holder runs it. Follow its row while the call may still wait.
      const row = await followCommand(deps, commandId, stopped.signal);
      if (row) return execPayload(row);
    }
    if (stopped.signal.aborted || queue.lifecycle === 'stopped') {
      throw new WorkbenchError(
        'unavailable',
        `unavailable: node "${deps.nodeId}" stopped while command ${commandId} was queued or running; its outcome is recorded when it ends (on this or another replica). Read it with GET /v1/commands/${commandId}, or repeat the call with the same callId`,
        { commandId, reason: 'node_stopping' },
      );
    }
    throw err;
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
}
