import type { Readable } from 'node:stream';
import type { ByteRange, ObjectStore } from './object-store.js';

/**
 * Reads an object (or a range of it) into one Buffer. For small objects only: the
 * whole result is held in memory. Fails like {@link ObjectStore.get}.
 */
export async function getBytes(
  store: ObjectStore,
  key: string,
  range?: ByteRange,
): Promise<Buffer> {
  return readAll(await store.get(key, range));
}

/** Collects a byte stream into one Buffer. */
export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}
