/**
 * Reading the streaming dispatch answer: `application/x-ndjson`, one JSON object per
 * line, `{"type":"output","stream":"stdout"|"stderr","data":"<base64>"}` while a
 * command runs, then exactly one `{"type":"result","result":<DispatchResult>}`.
 *
 * The splitter is pure and incremental: network chunks may end anywhere, inside a
 * line or inside a multi-byte character, and lines are only decoded once complete.
 *
 * @module
 */

import type { DispatchResult, DispatchStreamLine, OutputStream } from '../contract/index.js';
import { ClientError } from './client-error.js';

export type { OutputStream };

/** One parsed line of the stream ({@link DispatchStreamLine}), its output bytes decoded. */
export type StreamEvent =
  | { readonly type: 'output'; readonly stream: OutputStream; readonly data: Buffer }
  | { readonly type: 'result'; readonly result: DispatchResult };

const NEWLINE = 0x0a;

/**
 * Splits a byte stream into lines. Feed it chunks as they arrive; it returns the
 * lines each chunk completed (without the newline, `\r` stripped, blank lines
 * dropped). `end()` returns a last line that had no newline.
 */
export class NdjsonSplitter {
  private pending: Buffer[] = [];

  /** The complete lines in `chunk` together with what came before it. */
  push(chunk: Uint8Array): string[] {
    const lines: string[] = [];
    let buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let nl = buf.indexOf(NEWLINE);
    while (nl >= 0) {
      this.pending.push(buf.subarray(0, nl));
      const line = decodeLine(Buffer.concat(this.pending));
      this.pending = [];
      if (line !== '') lines.push(line);
      buf = buf.subarray(nl + 1);
      nl = buf.indexOf(NEWLINE);
    }
    // Copy: the caller may reuse the chunk's memory after this returns.
    if (buf.length > 0) this.pending.push(Buffer.from(buf));
    return lines;
  }

  /** The unterminated last line, if any. */
  end(): string[] {
    const line = decodeLine(Buffer.concat(this.pending));
    this.pending = [];
    return line === '' ? [] : [line];
  }
}

function decodeLine(bytes: Buffer): string {
  return bytes.toString('utf8').replace(/\r$/, '').trim();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function malformed(line: string, why: string): ClientError {
  return new ClientError(
    'internal',
    `internal: the dispatch stream sent a line the client cannot read (${why}): ${line.slice(0, 120)}`,
  );
}

/** Whether `value` has the shape of a dispatch result. */
export function isDispatchResult(value: unknown): value is DispatchResult {
  if (!isRecord(value)) return false;
  if (value.ok === true) return 'payload' in value;
  return (
    value.ok === false && typeof value.errorCode === 'string' && typeof value.message === 'string'
  );
}

/** Parses one line of the stream; throws a {@link ClientError} (`internal`) if it is not one. */
export function parseStreamEvent(line: string): StreamEvent {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw malformed(line, 'not JSON');
  }
  if (!isRecord(value)) throw malformed(line, 'not an object');
  if (value.type === 'output') {
    if (value.stream !== 'stdout' && value.stream !== 'stderr') {
      throw malformed(line, 'unknown output stream');
    }
    if (typeof value.data !== 'string') throw malformed(line, 'output without data');
    return { type: 'output', stream: value.stream, data: Buffer.from(value.data, 'base64') };
  }
  if (value.type === 'result') {
    if (!isDispatchResult(value.result)) throw malformed(line, 'result is not a dispatch result');
    return { type: 'result', result: value.result };
  }
  throw malformed(line, `unknown type ${JSON.stringify(value.type)}`);
}

/**
 * Reads a whole dispatch stream: calls `onOutput` for each output chunk as it
 * arrives and returns the result. A stream that ends without a result (the server
 * went away mid-command) is `unavailable`: the command may still have run, and its
 * id is not known, so the caller should look at the run's state before retrying.
 */
export async function readDispatchStream(
  body: AsyncIterable<Uint8Array>,
  onOutput: (stream: OutputStream, chunk: Buffer) => void,
): Promise<DispatchResult> {
  const splitter = new NdjsonSplitter();
  let result: DispatchResult | undefined;
  const take = (lines: string[]) => {
    for (const line of lines) {
      const event = parseStreamEvent(line);
      if (event.type === 'output') onOutput(event.stream, event.data);
      else result = event.result;
    }
  };
  for await (const chunk of body) take(splitter.push(chunk));
  take(splitter.end());
  if (result === undefined) {
    throw new ClientError(
      'unavailable',
      'unavailable: the dispatch stream ended before its result; the command may have run, check the run before retrying',
    );
  }
  return result;
}
