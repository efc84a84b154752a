/**
 * Streaming an artifact's bytes to a file or a writable stream without holding them
 * in memory, counting progress and hashing on the way so the caller can check the
 * bytes against the artifact's recorded `sha256`.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Readable, Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Called as bytes arrive: bytes so far, and the total when the server said (Content-Length). */
export type ProgressListener = (received: number, total: number | null) => void;

/** An artifact's bytes, opened but not yet read. */
export interface ArtifactBody {
  /** Size in bytes from `Content-Length`, or null when the server did not say. */
  readonly size: number | null;
  /** The artifact's MIME type, from `Content-Type`. */
  readonly contentType: string | null;
  /** The bytes, read once. */
  readonly body: AsyncIterable<Uint8Array>;
}

/** What a finished download wrote. */
export interface DownloadResult {
  /** Bytes written. */
  readonly bytes: number;
  /** Hex SHA-256 of the bytes written. */
  readonly sha256: string;
}

/**
 * Writes `source` to `to` (a file path, created or replaced, or a stream left open),
 * reporting progress. A failed download to a path removes the partial file, so a
 * file at that path after an error is never a truncated artifact.
 */
export async function writeArtifact(
  source: ArtifactBody,
  to: string | Writable,
  onProgress?: ProgressListener,
  signal?: AbortSignal,
): Promise<DownloadResult> {
  const hash = createHash('sha256');
  let received = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      received += chunk.length;
      hash.update(chunk);
      onProgress?.(received, source.size);
      done(null, chunk);
    },
  });
  const input = Readable.from(source.body, { objectMode: false });
  const options = signal === undefined ? {} : { signal };
  if (typeof to === 'string') {
    try {
      await pipeline(input, counter, createWriteStream(to), options);
    } catch (err) {
      await rm(to, { force: true });
      throw err;
    }
  } else {
    await pipeline(input, counter, to, { ...options, end: false });
  }
  return { bytes: received, sha256: hash.digest('hex') };
}
