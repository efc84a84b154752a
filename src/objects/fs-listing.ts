/**
 * Walks the objects directory in key order. Entries of a directory are sorted by
 * the key they lead to, a directory counting as its name plus `/`, which makes a
 * depth-first walk yield keys in the same UTF-8 byte order S3 lists them in
 * (`a-b` < `a.txt` < `a/x` < `a0`). Subtrees that cannot hold a key matching the
 * prefix, or that lie wholly before the cursor, are never read. Symbolic links and
 * anything that is not a plain file or directory are skipped, never followed.
 *
 * @module
 */

import type { Dirent } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { errnoCode } from './fs-errors.js';
import { lstatOrNull } from './fs-paths.js';
import type { ObjectInfo } from './object-store.js';

interface Entry {
  name: string;
  isDirectory: boolean;
  /** The key (file) or key prefix with trailing `/` (directory), as UTF-8. */
  order: Buffer;
}

/**
 * Yields the objects under `objectsDir` whose keys start with `prefix` and come
 * strictly after `after` (all of them when `after` is empty), in key order.
 */
export async function* walkObjects(
  objectsDir: string,
  prefix: string,
  after: string,
): AsyncGenerator<ObjectInfo> {
  yield* walkDirectory(objectsDir, '', Buffer.from(prefix), Buffer.from(after));
}

async function* walkDirectory(
  dir: string,
  dirKey: string,
  prefix: Buffer,
  after: Buffer,
): AsyncGenerator<ObjectInfo> {
  const entries = await readEntries(dir, dirKey);
  const wanted = entries.filter((entry) =>
    entry.isDirectory ? mayHold(entry.order, prefix, after) : matches(entry.order, prefix, after),
  );
  wanted.sort((a, b) => Buffer.compare(a.order, b.order));
  for (const entry of wanted) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) {
      yield* walkDirectory(path, `${dirKey}${entry.name}/`, prefix, after);
      continue;
    }
    // Deleted or replaced by something else since readdir: not an object any more.
    const stats = await lstatOrNull(path);
    if (stats?.isFile()) {
      yield { key: dirKey + entry.name, size: stats.size, lastModified: stats.mtime };
    }
  }
}

async function readEntries(dir: string, dirKey: string): Promise<Entry[]> {
  let dirents: Dirent[];
  try {
    dirents = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    // A directory removed by a concurrent delete holds nothing to list.
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw err;
  }
  const entries: Entry[] = [];
  for (const dirent of dirents) {
    let isDirectory = dirent.isDirectory();
    let isFile = dirent.isFile();
    if (!isDirectory && !isFile && !dirent.isSymbolicLink()) {
      // Some filesystems do not report the type in readdir.
      const stats = await lstat(join(dir, dirent.name)).catch(() => null);
      isDirectory = stats?.isDirectory() ?? false;
      isFile = stats?.isFile() ?? false;
    }
    if (!isDirectory && !isFile) continue;
    const key = dirKey + dirent.name;
    entries.push({
      name: dirent.name,
      isDirectory,
      order: Buffer.from(isDirectory ? `${key}/` : key),
    });
  }
  return entries;
}

function matches(key: Buffer, prefix: Buffer, after: Buffer): boolean {
  return startsWith(key, prefix) && Buffer.compare(key, after) > 0;
}

/** Whether keys starting with `dirKey` can match `prefix` and come after `after`. */
function mayHold(dirKey: Buffer, prefix: Buffer, after: Buffer): boolean {
  if (!startsWith(dirKey, prefix) && !startsWith(prefix, dirKey)) return false;
  // Every key under dirKey sorts before `after` unless `after` itself lies under it.
  const whollyBefore = Buffer.compare(dirKey, after) < 0 && !startsWith(after, dirKey);
  return !whollyBefore;
}

function startsWith(value: Buffer, prefix: Buffer): boolean {
  return value.length >= prefix.length && value.subarray(0, prefix.length).equals(prefix);
}
