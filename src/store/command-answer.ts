import { isUtf8 } from 'node:buffer';
import {
  type CommandEnding,
  type ExecPayload,
  type ExpectedOutputResult,
  parseExecRequest,
} from '../contract/index.js';
import type { Command } from './commands.js';

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
  const named = parseExecRequest(command.request)?.outputs;
  if (!named) return undefined;
  const message = `command_failed: not promoted: command ${command.id} ${howItEnded(command)}, and only a command that exits 0 promotes its outputs; fix it and run it again, or promote the file with promote_artifact`;
  return named.map((o) => ({ path: o.path, error: { code: 'command_failed', message } }));
}

/**
 * Output bytes as callers see them: UTF-8 text when they are text, else base64 with
 * the encoding named, so binary output is never handed out with replacement
 * characters. Output cut at its size limit may end inside a character: that partial
 * character (at most 3 bytes, already past the cut) does not make the rest binary.
 */
export function outputText(
  bytes: Buffer,
  truncated: boolean,
): { text: string; encoding?: 'base64' } {
  if (isUtf8(bytes)) return { text: bytes.toString('utf8') };
  if (truncated) {
    for (let cut = 1; cut <= 3 && cut <= bytes.length; cut++) {
      const head = bytes.subarray(0, bytes.length - cut);
      if (isUtf8(head)) return { text: head.toString('utf8') };
    }
  }
  return { text: bytes.toString('base64'), encoding: 'base64' };
}

/** An `exec` answer without what only a durable command adds (its id, sync, outputs). */
export type EndingAnswer = Omit<
  ExecPayload,
  'commandId' | 'filesRefused' | 'outputs' | 'egress' | 'version'
>;

/**
 * How a process ended and what it printed, as callers see it: output as UTF-8 text, or
 * base64 with `stdoutEncoding`/`stderrEncoding` when it is not text. The answer of a
 * durable command ({@link commandAnswer}) and of a worker host's `exec`, which has none.
 */
export function endingAnswer(ending: CommandEnding, stdout: Buffer, stderr: Buffer): EndingAnswer {
  const out = outputText(stdout, ending.stdoutTruncated);
  const err = outputText(stderr, ending.stderrTruncated);
  return {
    status: ending.status,
    exitCode: ending.exitCode,
    signal: ending.signal,
    timedOut: ending.timedOut,
    cancelled: ending.cancelled,
    oomKilled: ending.oomKilled,
    stdout: out.text,
    stderr: err.text,
    ...(out.encoding ? { stdoutEncoding: out.encoding } : {}),
    ...(err.encoding ? { stderrEncoding: err.encoding } : {}),
    stdoutTruncated: ending.stdoutTruncated,
    stderrTruncated: ending.stderrTruncated,
    durationMs: ending.durationMs,
  };
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
