/**
 * Waiting for a command to end: whichever comes first of this node's notice (it ran
 * the command), the poll of the rows waited for, and the row read at once when the
 * command may have ended already; or the caller's abort (the command carries on), the
 * queue's stop, or a notice that its outcome will only be recorded later.
 *
 * @module
 */

import { WorkbenchError } from '../contract/index.js';
import { type Command, type Db, getCommand } from '../store/index.js';
import { isTerminal } from './command-outcome.js';
import type { CommandPoll } from './command-poll.js';
import { type CommandWaiters, pendingOutcomeError } from './command-waiters.js';
import type { WaitOptions } from './queue-options.js';

/** What a wait reads and listens to: its queue's. */
export interface TerminalWaitDeps {
  readonly db: Db;
  readonly waiters: CommandWaiters;
  readonly poll: CommandPoll;
  /** Whether this node runs the command now (its end is then heard, not read). */
  readonly runsHere: (commandId: string) => boolean;
}

/**
 * Resolves with the command's row once it is terminal. Rejects with `not_found` for an
 * unknown id, with the signal's reason when `signal` aborts, with the queue's error
 * when it stops first, and with the pending-outcome error when recording is stuck.
 */
export async function waitForTerminal(
  deps: TerminalWaitDeps,
  commandId: string,
  options: WaitOptions,
): Promise<Command> {
  const { signal, row } = options;
  const { waiters } = deps;
  const cleanups: (() => void)[] = [];
  try {
    return await new Promise<Command>((resolve, reject) => {
      let settled = false;
      const end = (fn: () => void) => {
        if (settled) return;
        settled = true;
        fn();
      };
      const onRow = (found: Command | null) => {
        if (found === null) {
          end(() =>
            reject(new WorkbenchError('not_found', `not_found: no command "${commandId}"`)),
          );
        } else if (isTerminal(found)) {
          end(() => resolve(found));
        }
      };
      cleanups.push(waiters.onTerminal(commandId, (c) => end(() => resolve(c))));
      cleanups.push(waiters.onClose((err) => end(() => reject(err))));
      cleanups.push(waiters.onPending(commandId, (p) => end(() => reject(pendingOutcomeError(p)))));
      if (options.onOutput) cleanups.push(waiters.onOutput(commandId, options.onOutput));
      if (signal) {
        const onAbort = () => end(() => reject(signal.reason));
        signal.addEventListener('abort', onAbort, { once: true });
        cleanups.push(() => signal.removeEventListener('abort', onAbort));
      }
      cleanups.push(deps.poll.follow(commandId, onRow));
      // Read the row now when it may have ended already: the caller has no row (it may
      // have ended long ago), or this node ended it before the caller registered.
      // Otherwise the in-process notice (this node runs it) or the poll answers.
      const read = waiters.endedLately(commandId) || (!row && !deps.runsHere(commandId));
      if (read) {
        getCommand(deps.db, commandId).then(onRow, () => {
          // The database is unreachable for now; the poll tries again.
        });
      }
    });
  } finally {
    for (const fn of cleanups) fn();
  }
}
