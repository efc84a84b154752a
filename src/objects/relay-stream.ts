/**
 * Hands a response body to the caller through a stream of our own, so that a
 * failure mid-body arrives translated (as `object_store_unavailable`, not a socket
 * error), and so that a server that sent more than the asked-for range is cut back
 * to it.
 *
 * @module
 */

import { Readable } from 'node:stream';

/** Options of {@link relayStream}. */
export interface RelayOptions {
  /** Bytes to drop from the start of `source`. */
  skip: number;
  /** Bytes to pass on after the skipped ones; omitted means all. */
  take?: number;
  /** Turns an error of `source` into the error the caller sees. */
  mapError: (err: unknown) => unknown;
}

/** A stream of `source`'s bytes, sliced and with errors mapped. Backpressure is kept. */
export function relayStream(source: Readable, options: RelayOptions): Readable {
  let skip = options.skip;
  let left = options.take ?? Number.POSITIVE_INFINITY;
  let settled = false;
  const out = new Readable({
    read() {
      source.resume();
    },
    destroy(err, callback) {
      settled = true;
      source.destroy();
      callback(err);
    },
  });
  const end = (): void => {
    if (settled) return;
    settled = true;
    out.push(null);
    // Stop the transfer of bytes nobody asked for.
    source.destroy();
  };
  source.on('data', (chunk: Buffer) => {
    if (settled) return;
    let piece = chunk;
    if (skip > 0) {
      const dropped = Math.min(skip, piece.length);
      piece = piece.subarray(dropped);
      skip -= dropped;
    }
    if (piece.length > left) piece = piece.subarray(0, left);
    left -= piece.length;
    const wantsMore = piece.length === 0 || out.push(piece);
    if (left === 0) end();
    else if (!wantsMore) source.pause();
  });
  source.on('end', end);
  source.on('error', (err) => {
    if (settled) return;
    settled = true;
    out.destroy(toError(options.mapError(err)));
  });
  if (left === 0) end();
  return out;
}

function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
