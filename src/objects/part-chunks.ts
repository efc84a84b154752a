/**
 * Cuts a body into parts of a fixed size for multipart uploads, holding at most
 * one part (plus one incoming chunk) in memory.
 *
 * @module
 */

import type { Readable } from 'node:stream';
import { bodyChunks } from './body-chunks.js';

/** One part of a body. */
export interface BodyPart {
  /** Exactly the part size, except for the last part. */
  bytes: Buffer;
  /** True for the final part; it is empty only when the whole body is. */
  last: boolean;
}

/**
 * Yields `body` as parts of `partSize` bytes. A part is marked `last` only once the
 * body has ended, so the caller learns whether a body fits in one part after
 * reading at most one part and one chunk. Errors of `body` propagate unchanged.
 */
export async function* bodyParts(
  body: Uint8Array | Readable,
  partSize: number,
): AsyncGenerator<BodyPart> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const chunk of bodyChunks(body)) {
    if (chunk.length === 0) continue;
    pending.push(chunk);
    pendingBytes += chunk.length;
    // Strictly greater: with exactly one part pending, the body may be over.
    while (pendingBytes > partSize) {
      const joined = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
      yield { bytes: joined.subarray(0, partSize), last: false };
      pending = [joined.subarray(partSize)];
      pendingBytes -= partSize;
    }
  }
  yield { bytes: Buffer.concat(pending, pendingBytes), last: true };
}
