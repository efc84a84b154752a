import { type ExecPayload, type ExpectedOutputResult, endingAnswer } from '../contract/index.js';
import type { Command } from '../store/index.js';

/** Why a command that did not succeed promoted nothing, in words. */
function howItEnded(command: Command): string {
  switch (command.status) {
    case 'completed':
      return command.exitCode === null
        ? `was ended by ${command.signal ?? 'a signal'}`
        : `exited with code ${command.exitCode}`;
    case 'timed_out':
      return 'timed out';
    case 'cancelled':
      return 'was cancelled';
    default:
      return `failed (${command.errorCode ?? 'no code'})`;
  }
}

/**
 * What became of a command's expected outputs: as its finish recorded them (it
 * succeeded), else, once it has ended, each one `command_failed` (nothing of a command
 * that did not succeed is promoted). Undefined when it named none, or has not ended.
 */
export function expectedOutputs(command: Command): ExpectedOutputResult[] | undefined {
  if (command.outputs) return command.outputs;
  if (command.status === 'queued' || command.status === 'running') return undefined;
  const named = command.execRequest?.outputs;
  if (!named) return undefined;
  const message = `command_failed: not promoted: command ${command.id} ${howItEnded(command)}, and only a command that exits 0 promotes its outputs; fix it and run it again, or promote the file with promote_artifact`;
  return named.map((o) => ({ path: o.path, error: { code: 'command_failed', message } }));
}

/**
 * How a command ended, as callers see it (the `exec` answer and the API's command
 * views): {@link endingAnswer} of its row, with the entries its sync refused and its
 * expected outputs. Not to be confused with the queue's `decideOutcome`, which decides
 * what a worker records.
 */
export function commandAnswer(command: Command): Omit<ExecPayload, 'commandId'> {
  const outputs = expectedOutputs(command);
  return {
    ...endingAnswer(
      {
        status: command.status,
        exitCode: command.exitCode,
        signal: command.signal,
        timedOut: command.status === 'timed_out',
        cancelled: command.status === 'cancelled',
        oomKilled: command.oomKilled,
        stdoutTruncated: command.stdoutTruncated,
        stderrTruncated: command.stderrTruncated,
        durationMs: command.execDurationMs,
      },
      command.stdout ?? Buffer.alloc(0),
      command.stderr ?? Buffer.alloc(0),
    ),
    ...(command.filesRefused ? { filesRefused: command.filesRefused } : {}),
    ...(outputs ? { outputs } : {}),
    ...(command.egress ? { egress: command.egress } : {}),
    ...(typeof command.workspaceVersion === 'number' ? { version: command.workspaceVersion } : {}),
  };
}
