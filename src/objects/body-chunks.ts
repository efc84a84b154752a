/**
 * A put body as a sequence of byte chunks, whatever form it came in.
 *
 * @module
 */

import type { Readable } from 'node:stream';

/**
 * Iterates `body` as Buffers: a Uint8Array as one chunk, a stream chunk by chunk
 * (pulling the next only when asked, so backpressure holds). Stopping early
 * destroys the stream; its errors propagate unchanged.
 */
export async function* bodyChunks(body: Uint8Array | Readable): AsyncGenerator<Buffer> {
  if (body instanceof Uint8Array) {
    yield asBuffer(body);
    return;
  }
  for await (const chunk of body) {
    if (typeof chunk === 'string') yield Buffer.from(chunk, 'utf8');
    else if (chunk instanceof Uint8Array) yield asBuffer(chunk);
    else throw new TypeError('a put body stream must yield Buffer, Uint8Array or string chunks');
  }
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}
