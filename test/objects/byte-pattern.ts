import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';

/**
 * Deterministic test bytes: the byte at position p depends on p alone and looks
 * random, so a range, a misplaced part or a dropped chunk changes the result.
 */
export function patternByte(position: number): number {
  let x = Math.imul(position ^ (position >>> 15), 0x2c1b3c6d);
  x ^= x >>> 12;
  x = Math.imul(x, 0x297a2d39);
  x ^= x >>> 15;
  return x & 0xff;
}

/** `length` pattern bytes starting at `offset`. */
export function patternBytes(offset: number, length: number): Buffer {
  const bytes = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) bytes[i] = patternByte(offset + i);
  return bytes;
}

const CHUNK = 256 * 1024;

/** A stream of `size` pattern bytes, generated chunk by chunk as it is read. */
export function patternStream(size: number): Readable {
  return Readable.from(patternChunks(size), { objectMode: false });
}

function* patternChunks(size: number): Generator<Buffer> {
  for (let offset = 0; offset < size; offset += CHUNK) {
    yield patternBytes(offset, Math.min(CHUNK, size - offset));
  }
}

/** SHA-256 (hex) of `size` pattern bytes, without holding them. */
export function patternSha256(size: number): string {
  const hash = createHash('sha256');
  for (const chunk of patternChunks(size)) hash.update(chunk);
  return hash.digest('hex');
}

/** SHA-256 (hex) and length of a stream, read chunk by chunk. */
export async function streamSha256(stream: Readable): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), size };
}

/** A stream that yields `bytesBefore` pattern bytes and then fails with `error`. */
export function failingStream(bytesBefore: number, error: Error): Readable {
  async function* chunks(): AsyncGenerator<Buffer> {
    yield* patternChunks(bytesBefore);
    throw error;
  }
  return Readable.from(chunks(), { objectMode: false });
}
