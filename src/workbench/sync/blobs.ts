/**
 * Workspace file content in the object store: one content-addressed blob per
 * distinct file content of a run, under `runs/<runId>/blobs/<sha256>`. Keys are per
 * run so that deleting a run deletes exactly its prefix, and no run can reach
 * another's bytes by guessing a hash.
 *
 * Reads of workspace files open the final component with `O_NOFOLLOW` and
 * `O_NONBLOCK` and check, through the descriptor, that what was opened is a regular
 * file inside the workspace, so a path swapped for a link after the scan is never
 * read through, and one swapped for a FIFO never blocks the read.
 *
 * @module
 */

import { createHash, type Hash } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, open, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { isInsideRealRoot } from '../../files/index.js';
import type { ObjectStore } from '../../objects/index.js';
import { FileChangedDuringSync } from './errors.js';

/** The object key of a run's blob with the given content hash. */
export function blobKey(runId: string, hash: string): string {
  return `runs/${runId}/blobs/${hash}`;
}

/** The prefix under which all of a run's blobs live. */
export function runBlobPrefix(runId: string): string {
  return `runs/${runId}/blobs/`;
}

/** A workspace file to read: where it is and what the scan saw. */
export interface WorkspaceFileRef {
  /** Workspace-relative path. */
  rel: string;
  /** Size the scan reported; a different size means the file changed. */
  size: number;
  /** Real path (symlinks resolved) of the workspace root. */
  realRoot: string;
  /** The workspace root as given. */
  root: string;
}

/** Reads a workspace file and returns its lowercase hex SHA-256. */
export type FileHasher = (file: WorkspaceFileRef) => Promise<string>;

/** Passes bytes through unchanged while hashing and counting them. */
export class HashingStream extends Transform {
  private readonly hash: Hash = createHash('sha256');
  /** Bytes seen so far. */
  bytes = 0;

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    done(null, chunk);
  }

  /** The hex digest; call once, after the stream has finished. */
  digest(): string {
    return this.hash.digest('hex');
  }
}

/**
 * Opens a workspace file for reading without following links, confirms it is a
 * regular file of the expected size inside the workspace, or throws
 * {@link FileChangedDuringSync}.
 */
async function openConfined(file: WorkspaceFileRef): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    // O_NONBLOCK: a file swapped for a FIFO since the scan must not block the open.
    handle = await open(
      join(file.root, file.rel),
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENOTDIR' || code === 'ENXIO') {
      throw new FileChangedDuringSync(file.rel);
    }
    throw err;
  }
  try {
    const real = await readlink(`/proc/self/fd/${handle.fd}`);
    const st = await handle.stat();
    if (!isInsideRealRoot(file.realRoot, real) || !st.isFile() || st.size !== file.size) {
      throw new FileChangedDuringSync(file.rel);
    }
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/**
 * Files up to this size are read whole rather than streamed: a workspace of many small
 * files spends its sync on per-file overhead, not on bytes.
 */
export const SMALL_BLOB_BYTES = 64 * 1024;

/** Reads a small file whole, checking it still has the size the scan saw. */
async function readSmall(handle: FileHandle, file: WorkspaceFileRef): Promise<Buffer> {
  const bytes = await handle.readFile();
  if (bytes.length !== file.size) throw new FileChangedDuringSync(file.rel);
  return bytes;
}

/** The default {@link FileHasher}: streams the file through SHA-256. */
export const sha256WorkspaceFile: FileHasher = async (file) => {
  const handle = await openConfined(file);
  if (file.size <= SMALL_BLOB_BYTES) {
    try {
      return createHash('sha256')
        .update(await readSmall(handle, file))
        .digest('hex');
    } finally {
      await handle.close();
    }
  }
  const hash = createHash('sha256');
  let bytes = 0;
  try {
    for await (const chunk of handle.createReadStream({ autoClose: false })) {
      hash.update(chunk as Buffer);
      bytes += (chunk as Buffer).length;
    }
  } finally {
    await handle.close();
  }
  if (bytes !== file.size) throw new FileChangedDuringSync(file.rel);
  return hash.digest('hex');
};

/**
 * Uploads a workspace file as the blob for `hash`, hashing the bytes as they go. If
 * the file no longer has that content (it changed after it was hashed) the blob just
 * written is deleted and {@link FileChangedDuringSync} is thrown, so no key ever
 * holds content other than its hash. Returns the bytes uploaded.
 */
export async function uploadBlob(
  objects: ObjectStore,
  key: string,
  hash: string,
  file: WorkspaceFileRef,
): Promise<number> {
  const handle = await openConfined(file);
  if (file.size <= SMALL_BLOB_BYTES) {
    // Read whole and checked before it goes up: the key never holds other content.
    try {
      const bytes = await readSmall(handle, file);
      if (createHash('sha256').update(bytes).digest('hex') !== hash) {
        throw new FileChangedDuringSync(file.rel);
      }
      await objects.put(key, bytes, { contentLength: bytes.length });
      return bytes.length;
    } finally {
      await handle.close();
    }
  }
  const hashing = new HashingStream();
  const source = handle.createReadStream({ autoClose: false });
  source.on('error', (err) => hashing.destroy(err));
  try {
    await objects.put(key, source.pipe(hashing), { contentLength: file.size });
  } catch (err) {
    if ((err as { code?: unknown }).code === 'object_size_mismatch') {
      throw new FileChangedDuringSync(file.rel);
    }
    throw err;
  } finally {
    // A store that gave up early leaves the read half-done; stop it before the
    // descriptor goes away.
    source.destroy();
    hashing.destroy();
    await handle.close();
  }
  if (hashing.digest() !== hash) {
    await objects.deleteMany([key]);
    throw new FileChangedDuringSync(file.rel);
  }
  return hashing.bytes;
}
