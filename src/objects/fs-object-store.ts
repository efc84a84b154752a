/**
 * The filesystem object store, the embedded default. Objects are plain files, so
 * an operator can `ls` and `cat` them:
 *
 * - `<baseDir>/objects/<key>`: one file per object, `/` in the key being a
 *   directory level. Empty directories are removed as their last object goes.
 * - `<baseDir>/.tmp/`: bodies being written. A write lands here first and is
 *   renamed into place, so a reader sees the old object or the new one, never a
 *   part; the folder sits outside the key space, so it can never be listed.
 *
 * One limit S3 does not have: a key cannot be both an object and a prefix of other
 * keys (`a` and `a/b`); the second write fails with `object_key_conflict`.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { type FileHandle, open, rename, rm, rmdir, unlink } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { Readable } from 'node:stream';
import { bodyChunks } from './body-chunks.js';
import { ObjectNotFoundError, ObjectSizeMismatchError } from './errors.js';
import { errnoCode, translateFsError } from './fs-errors.js';
import { createLayout, type FsLayout } from './fs-layout.js';
import { walkObjects } from './fs-listing.js';
import { findObjectFile, lstatOrNull, prepareObjectPath, symlinkRefused } from './fs-paths.js';
import { validateListPrefix, validateObjectKey } from './object-key.js';
import type {
  ByteRange,
  ListObjectsOptions,
  ObjectInfo,
  ObjectListPage,
  ObjectStore,
  PutObjectOptions,
  PutObjectResult,
} from './object-store.js';
import { deleteByListing, removeTree } from './prefix-delete.js';
import { checkByteRange, checkPutOptions, listLimit } from './store-arguments.js';

/** Options of {@link FsObjectStore}. */
export interface FsObjectStoreOptions {
  /** Directory holding the store; created if missing. */
  baseDir: string;
  /**
   * Flush each object to disk before it becomes visible. Default `true`: the
   * store is the durable copy of workspace files, and a rename without a flush can
   * leave an empty file after a power loss.
   */
  fsync?: boolean;
}

/** Rename retries when a concurrent delete removes a parent directory just made. */
const INSTALL_ATTEMPTS = 5;

/** An {@link ObjectStore} over a local directory. */
export class FsObjectStore implements ObjectStore {
  readonly baseDir: string;
  private readonly fsync: boolean;
  private layout: Promise<FsLayout> | undefined;

  constructor(options: FsObjectStoreOptions) {
    this.baseDir = options.baseDir;
    this.fsync = options.fsync ?? true;
  }

  async put(
    key: string,
    body: Uint8Array | Readable,
    opts?: PutObjectOptions,
  ): Promise<PutObjectResult> {
    validateObjectKey(key);
    checkPutOptions(opts);
    const { objectsDir, tmpDir } = await this.ready();
    const tmpPath = join(tmpDir, `${randomUUID()}.part`);
    try {
      const size = await this.writeTemp(tmpPath, key, body, opts?.contentLength);
      await this.install(objectsDir, key, tmpPath);
      return { size };
    } catch (err) {
      await rm(tmpPath, { force: true }).catch(() => undefined);
      if (err instanceof BodyFailure) throw err.error;
      throw translateFsError(err, key);
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    validateObjectKey(key);
    checkByteRange(range);
    const { objectsDir } = await this.ready();
    try {
      const found = await findObjectFile(objectsDir, key);
      if (found === null) throw new ObjectNotFoundError(key);
      if (range?.length === 0) return Readable.from([]);
      const handle = await openNoFollow(found.path, key);
      const start = range?.offset ?? 0;
      const end = range?.length === undefined ? undefined : start + range.length - 1;
      return handle.createReadStream(end === undefined ? { start } : { start, end });
    } catch (err) {
      throw translateFsError(err, key);
    }
  }

  async head(key: string): Promise<ObjectInfo | null> {
    validateObjectKey(key);
    const { objectsDir } = await this.ready();
    try {
      const found = await findObjectFile(objectsDir, key);
      return found && { key, size: found.stats.size, lastModified: found.stats.mtime };
    } catch (err) {
      throw translateFsError(err, key);
    }
  }

  async list(prefix: string, opts?: ListObjectsOptions): Promise<ObjectListPage> {
    validateListPrefix(prefix);
    const limit = listLimit(opts?.limit);
    const { objectsDir } = await this.ready();
    const items: ObjectInfo[] = [];
    try {
      for await (const item of walkObjects(objectsDir, prefix, opts?.cursor ?? '')) {
        if (items.length === limit) {
          return { items, nextCursor: items[items.length - 1]!.key };
        }
        items.push(item);
      }
    } catch (err) {
      throw translateFsError(err, prefix);
    }
    return { items };
  }

  async deleteMany(keys: string[]): Promise<void> {
    for (const key of keys) validateObjectKey(key);
    const { objectsDir } = await this.ready();
    for (const key of new Set(keys)) {
      try {
        const found = await findObjectFile(objectsDir, key);
        if (found === null) continue;
        await unlink(found.path).catch((err: unknown) => {
          if (errnoCode(err) !== 'ENOENT') throw err;
        });
        await removeEmptyParents(objectsDir, found.path);
      } catch (err) {
        throw translateFsError(err, key);
      }
    }
  }

  /**
   * A prefix that names a directory (it ends with `/`) is removed as a tree, with no
   * listing; any other prefix is listed and deleted page by page.
   */
  async deletePrefix(prefix: string): Promise<number> {
    validateListPrefix(prefix);
    if (!prefix.endsWith('/') || prefix === '/') return deleteByListing(this, prefix);
    const { objectsDir } = await this.ready();
    const segments = prefix.slice(0, -1).split('/');
    let dir = objectsDir;
    try {
      for (const segment of segments) {
        dir = join(dir, segment);
        const stats = await lstatOrNull(dir);
        if (stats === null || !stats.isDirectory()) {
          // Nothing there as a directory: nothing under the prefix either, unless a
          // link stands in the way, which is refused as elsewhere.
          if (stats?.isSymbolicLink()) throw symlinkRefused(prefix);
          return 0;
        }
      }
      const removed = await removeTree(dir);
      await removeEmptyParents(objectsDir, join(dir, 'x'));
      return removed;
    } catch (err) {
      throw translateFsError(err, prefix);
    }
  }

  async copy(srcKey: string, dstKey: string): Promise<void> {
    validateObjectKey(srcKey);
    validateObjectKey(dstKey);
    if (srcKey === dstKey) {
      if ((await this.head(srcKey)) === null) throw new ObjectNotFoundError(srcKey);
      return;
    }
    const source = await this.get(srcKey);
    try {
      await this.put(dstKey, source);
    } catch (err) {
      source.destroy();
      // A read error of the source file arrives as a body error; it is still ours.
      throw translateFsError(err, srcKey);
    }
  }

  /** Creates the layout once; a failed attempt is retried by the next call. */
  private ready(): Promise<FsLayout> {
    this.layout ??= createLayout(this.baseDir).catch((err: unknown) => {
      this.layout = undefined;
      throw err;
    });
    return this.layout;
  }

  private async writeTemp(
    tmpPath: string,
    key: string,
    body: Uint8Array | Readable,
    expected: number | undefined,
  ): Promise<number> {
    const handle = await open(tmpPath, 'wx', 0o644);
    try {
      const size = await writeBody(handle, body, (written) => {
        if (expected !== undefined && written > expected) {
          throw new ObjectSizeMismatchError(key, expected, written);
        }
      });
      if (expected !== undefined && size !== expected) {
        throw new ObjectSizeMismatchError(key, expected, size);
      }
      if (this.fsync) await handle.sync();
      return size;
    } finally {
      await handle.close();
    }
  }

  private async install(objectsDir: string, key: string, tmpPath: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const path = await prepareObjectPath(objectsDir, key);
      try {
        await rename(tmpPath, path);
        return;
      } catch (err) {
        if (errnoCode(err) !== 'ENOENT' || attempt === INSTALL_ATTEMPTS) throw err;
      }
    }
  }
}

/** Wraps an error raised by the caller's body, so it is rethrown untranslated. */
class BodyFailure {
  constructor(readonly error: unknown) {}
}

/**
 * Streams `body` into `handle` chunk by chunk, so memory holds one chunk at a
 * time. `afterChunk` sees the running total and may throw to stop early.
 */
async function writeBody(
  handle: FileHandle,
  body: Uint8Array | Readable,
  afterChunk: (written: number) => void,
): Promise<number> {
  let size = 0;
  let inBody = true;
  try {
    for await (const chunk of bodyChunks(body)) {
      inBody = false;
      size += chunk.length;
      afterChunk(size);
      await writeFully(handle, chunk);
      inBody = true;
    }
  } catch (err) {
    throw inBody ? new BodyFailure(err) : err;
  }
  return size;
}

async function writeFully(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
    offset += bytesWritten;
  }
}

async function openNoFollow(path: string, key: string): Promise<FileHandle> {
  try {
    return await open(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  } catch (err) {
    const code = errnoCode(err);
    // Removed since it was found: gone, as far as the caller can tell.
    if (code === 'ENOENT') throw new ObjectNotFoundError(key, { cause: err });
    if (code === 'ELOOP') throw symlinkRefused(key);
    throw err;
  }
}

async function removeEmptyParents(objectsDir: string, filePath: string): Promise<void> {
  let dir = dirname(filePath);
  while (dir.startsWith(objectsDir + sep)) {
    try {
      await rmdir(dir);
    } catch {
      // Not empty (or already gone): the ancestors are not empty either.
      return;
    }
    dir = dirname(dir);
  }
}
