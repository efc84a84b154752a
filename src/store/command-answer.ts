import type { ExecPayload } from '../contract/index.js';
import type { Command } from './commands.js';

/**
 * How a command ended, as callers see it (the `exec` answer and the API's command
 * views): output as UTF-8 text. Not to be confused with the queue's `decideOutcome`,
 * which decides what a worker records.
 */
export function commandAnswer(command: Command): Omit<ExecPayload, 'commandId'> {
  return {
    status: command.status,
    exitCode: command.exitCode,
    signal: command.signal,
    timedOut: command.status === 'timed_out',
    cancelled: command.status === 'cancelled',
    oomKilled: command.oomKilled,
    stdout: (command.stdout ?? Buffer.alloc(0)).toString('utf8'),
    stderr: (command.stderr ?? Buffer.alloc(0)).toString('utf8'),
    stdoutTruncated: command.stdoutTruncated,
    stderrTruncated: command.stderrTruncated,
    durationMs: command.execDurationMs,
    ...(command.filesRefused ? { filesRefused: command.filesRefused } : {}),
  };
}
