/**
 * How a process's end and output look to a caller, for a durable command and a worker
 * host's `exec` alike: output as UTF-8 text, or base64 when it is not text.
 *
 * @module
 */

import { isUtf8 } from 'node:buffer';
import type { CommandEnding, ExecPayload } from './wire-shapes.js';

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
