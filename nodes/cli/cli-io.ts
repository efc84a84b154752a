/**
 * What the runners of `memql` commands share: the streams a command uses, a line or
 * JSON written to them, a dispatch and its payload, and a refused dispatch carried to
 * the one place that prints errors (`runCli`).
 */
import type { Readable, Writable } from 'node:stream';
import type { DispatchResult } from '../../src/client/index.js';

/** Where a command's output goes; the process's streams in the binary. */
export interface CliIo {
  readonly stdout: Writable & { isTTY?: boolean };
  readonly stderr: Writable & { isTTY?: boolean };
  readonly stdin: Readable & { isTTY?: boolean };
}

/** A dispatch the server refused, carried to the one place that prints errors. */
export class Refused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The payload of an answer, or its refusal thrown as {@link Refused}. */
export function payloadOf<P>(result: DispatchResult): P {
  if (!result.ok) throw new Refused(result.errorCode, result.message);
  return result.payload as P;
}

/** Writes `text` as one line. */
export const line = (out: Writable, text: string) =>
  out.write(text.endsWith('\n') ? text : `${text}\n`);
/** Writes `value` as indented JSON. */
export const json = (out: Writable, value: unknown) =>
  out.write(`${JSON.stringify(value, null, 2)}\n`);

/** One dispatch of an action on a run, with the invocation's ids. */
export type Call = (
  runId: string,
  action: string,
  args: Record<string, unknown>,
) => Promise<DispatchResult>;

/** Everything `stream` gives until it ends. */
export async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}
