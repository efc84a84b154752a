/**
 * The writing half of hydrate and reconcile: put manifest files into a local
 * directory, and take away what the manifest does not have.
 *
 * A file is downloaded to a temporary file outside the workspace, checked against
 * the manifest's size and SHA-256 (a small one in memory, before it is written at
 * all), given its mode, owner and mtime, and renamed into place, so a reader never
 * sees half a file and a crash never leaves a stray temporary file inside the
 * workspace. The temporary directory must be on the same
 * filesystem as the workspace (the default, a sibling of it, is).
 *
 * Nothing here follows a symbolic link out of the workspace: a link (or file) where
 * the manifest needs a directory is removed and replaced by a real directory, the
 * rename replaces a link at the final path rather than writing through it, and
 * removal unlinks links themselves. Directory trees are removed by `files/remove-tree.ts`,
 * which reaches trees deeper than `PATH_MAX`.
 *
 * @module
 */

import { createHash, randomUUID } from 'node:crypto';
import { constants, fchmodSync, fchownSync, futimesSync } from 'node:fs';
import {
  chmod,
  chown,
  type FileHandle,
  lstat,
  mkdir,
  open,
  rename,
  rmdir,
  unlink,
  utimes,
} from 'node:fs/promises';
import { join } from 'node:path';
import { removeEntriesOf, removeTree } from '../../files/index.js';
import type { ObjectStore } from '../../objects/index.js';
import { blobOwner, type ManifestFile } from '../../store/index.js';
import { blobKey, SMALL_BLOB_BYTES } from './blobs.js';
import { BlobCorrupt } from './errors.js';
import { mapLimit } from './pool.js';

/** Where and how files are written. */
export interface MaterializeTarget {
  runId: string;
  /** The workspace directory. */
  dir: string;
  /** Holds temporary downloads; same filesystem as `dir`. Created when missing. */
  tempDir: string;
  objects: ObjectStore;
  /** Owner of every file and directory written, so sandboxed commands can change them. */
  owner?: { uid: number; gid: number };
  concurrency: number;
}

/** Counts of a batch of downloads. */
export interface DownloadCounts {
  files: number;
  bytes: number;
}

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Makes each parent of a file a real directory, one component at a time. Memoised
 * per batch, so a thousand files in one folder check it once.
 */
class ParentMaker {
  private readonly made = new Map<string, Promise<void>>();
  constructor(private readonly target: MaterializeTarget) {}

  ensure(rel: string): Promise<void> {
    const parts = rel.split('/').slice(0, -1);
    let chain: Promise<void> = Promise.resolve();
    for (let i = 1; i <= parts.length; i++) {
      const dirRel = parts.slice(0, i).join('/');
      let step = this.made.get(dirRel);
      if (step === undefined) {
        step = chain.then(() => this.makeOne(dirRel));
        this.made.set(dirRel, step);
      }
      chain = step;
    }
    return chain;
  }

  private async makeOne(dirRel: string): Promise<void> {
    const abs = join(this.target.dir, dirRel);
    const st = await lstat(abs).catch((err) => {
      if (errno(err) === 'ENOENT') return null;
      throw err;
    });
    if (st?.isDirectory()) return;
    // A file, link or anything else where the manifest needs a directory goes.
    if (st !== null) await unlink(abs);
    await mkdir(abs, { mode: 0o755 }).catch((err) => {
      if (errno(err) !== 'EEXIST') throw err;
    });
    if (this.target.owner) await chown(abs, this.target.owner.uid, this.target.owner.gid);
  }
}

/**
 * Reads a blob chunk by chunk into `take`, and throws unless it is exactly `file`'s
 * content. Reading stops as soon as the body runs past the entry's size.
 */
async function receive(
  target: MaterializeTarget,
  key: string,
  file: ManifestFile,
  take: (chunk: Buffer) => unknown,
): Promise<void> {
  const body = await target.objects.get(key);
  const hash = createHash('sha256');
  let bytes = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > file.size) throw new BlobCorrupt(file.path, key);
      hash.update(chunk);
      await take(chunk);
    }
  } finally {
    body.destroy();
  }
  if (bytes !== file.size || hash.digest('hex') !== file.hash) {
    throw new BlobCorrupt(file.path, key);
  }
}

/** Writes all of `chunk` at the handle's position. */
async function writeAll(handle: FileHandle, chunk: Buffer): Promise<void> {
  for (let done = 0; done < chunk.length; ) {
    done += (await handle.write(chunk, done)).bytesWritten;
  }
}

/**
 * Gives a written temporary file its mode, owner and mtime, through its descriptor.
 * These calls run on the event loop's thread: they touch only the inode of a regular
 * file this node just created, and each costs less than a thread-pool round trip.
 */
function setMetadata(target: MaterializeTarget, fd: number, file: ManifestFile): void {
  fchmodSync(fd, file.mode);
  if (target.owner) fchownSync(fd, target.owner.uid, target.owner.gid);
  const mtime = file.mtimeMs / 1000;
  futimesSync(fd, mtime, mtime);
}

/**
 * Renames a finished temporary file into place. The rename replaces a file or link
 * there (never writing through a link); a directory there, with whatever a command
 * made inside, at any depth, is removed first.
 */
async function place(tmp: string, final: string): Promise<void> {
  try {
    await rename(tmp, final);
  } catch (err) {
    if (errno(err) !== 'EISDIR') throw err;
    await removeTree(final);
    await rename(tmp, final);
  }
}

async function downloadOne(
  target: MaterializeTarget,
  parents: ParentMaker,
  file: ManifestFile,
): Promise<void> {
  const key = blobKey(blobOwner(target.runId, file), file.hash);
  // A small file is fetched whole and checked before anything is written for it.
  let content: Buffer | null = null;
  if (file.size <= SMALL_BLOB_BYTES) {
    const chunks: Buffer[] = [];
    await receive(target, key, file, (chunk) => chunks.push(chunk));
    content = Buffer.concat(chunks);
  }
  await parents.ensure(file.path);
  const tmp = join(target.tempDir, `${randomUUID()}.part`);
  let handle: FileHandle | null = null;
  try {
    handle = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    const opened = handle;
    if (content !== null) await writeAll(opened, content);
    else await receive(target, key, file, (chunk) => writeAll(opened, chunk));
    setMetadata(target, handle.fd, file);
    await handle.close();
    handle = null;
    await place(tmp, join(target.dir, file.path));
  } catch (err) {
    await handle?.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/**
 * Downloads `files` into the directory, at most `concurrency` at a time. The first
 * failure stops the batch (files already renamed into place stay) and is thrown.
 */
export async function downloadFiles(
  target: MaterializeTarget,
  files: readonly ManifestFile[],
): Promise<DownloadCounts> {
  await mkdir(target.tempDir, { recursive: true, mode: 0o700 });
  const parents = new ParentMaker(target);
  await mapLimit(files, target.concurrency, (file) => downloadOne(target, parents, file));
  return { files: files.length, bytes: files.reduce((sum, f) => sum + f.size, 0) };
}

/** Sets mode and mtime of local files whose content already matches the manifest. */
export async function fixMetadata(
  target: MaterializeTarget,
  files: readonly ManifestFile[],
): Promise<void> {
  await mapLimit(files, target.concurrency, async (file) => {
    const abs = join(target.dir, file.path);
    // The scan saw a regular file here; lstat again so a link is never chmod'ed through.
    if (!(await lstat(abs)).isFile()) return;
    await chmod(abs, file.mode);
    const mtime = file.mtimeMs / 1000;
    await utimes(abs, mtime, mtime);
  });
}

/**
 * Removes local entries (files, links, other non-durable entries) by path, never
 * following a link. Directories emptied by a removal are removed as well, up to the
 * workspace root; directories that were already empty are left alone.
 */
export async function removeEntries(dir: string, paths: readonly string[]): Promise<number> {
  let removed = 0;
  for (const rel of paths) {
    try {
      await unlink(join(dir, rel));
      removed += 1;
    } catch (err) {
      if (errno(err) !== 'ENOENT') throw err;
      continue;
    }
    const parts = rel.split('/');
    for (let i = parts.length - 1; i >= 1; i--) {
      try {
        await rmdir(join(dir, ...parts.slice(0, i)));
      } catch {
        break;
      }
    }
  }
  return removed;
}

/**
 * Removes entries a scan could not reach (too deep for a path-based call), each with
 * everything below it, through its parent directory; never follows a link. Returns
 * how many were removed.
 */
export async function removeUnreachable(dir: string, paths: readonly string[]): Promise<number> {
  const byParent = new Map<string, string[]>();
  for (const rel of paths) {
    const cut = rel.lastIndexOf('/');
    const parent = cut < 0 ? '' : rel.slice(0, cut);
    const names = byParent.get(parent) ?? [];
    names.push(rel.slice(cut + 1));
    byParent.set(parent, names);
  }
  for (const [parent, names] of byParent) {
    await removeEntriesOf(parent === '' ? dir : join(dir, parent), names);
  }
  return paths.length;
}
