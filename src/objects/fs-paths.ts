/**
 * Where keys live on disk, and the walk that keeps them there. A valid key cannot
 * name a path outside the objects directory, but a symbolic link inside it could
 * lead out, so every component is checked with `lstat` and no link is ever
 * followed: a key whose path meets one is refused.
 *
 * A process that can write into the base directory could still swap a checked
 * directory for a link between the check and the use; the store's directory is
 * private to the node, so that writer is outside the threat model. Opens of the
 * object file itself use `O_NOFOLLOW`, which closes the gap for the last component.
 *
 * @module
 */

import type { Stats } from 'node:fs';
import { lstat, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { InvalidObjectKeyError, ObjectKeyConflictError } from './errors.js';
import { errnoCode } from './fs-errors.js';

/** An object file found for a key. */
export interface FoundObject {
  path: string;
  stats: Stats;
}

/**
 * Finds the object file of a valid key. Returns `null` when there is none (a
 * missing component, a file where a directory should be, or a directory where the
 * file should be). Throws `invalid_object_key` if a component is a symbolic link.
 */
export async function findObjectFile(objectsDir: string, key: string): Promise<FoundObject | null> {
  const segments = key.split('/');
  let path = objectsDir;
  for (const [index, segment] of segments.entries()) {
    path = join(path, segment);
    const stats = await lstatOrNull(path);
    if (stats === null) return null;
    if (stats.isSymbolicLink()) throw symlinkRefused(key);
    if (index < segments.length - 1) {
      if (!stats.isDirectory()) return null;
    } else {
      return stats.isFile() ? { path, stats } : null;
    }
  }
  return null;
}

/**
 * Makes the parent directories of a valid key's path, one by one, and returns the
 * path. Throws `invalid_object_key` on a symbolic link and `object_key_conflict`
 * when a file stands where a directory is needed or a directory where the object
 * goes.
 */
export async function prepareObjectPath(objectsDir: string, key: string): Promise<string> {
  const segments = key.split('/');
  const last = segments.pop() as string;
  let dir = objectsDir;
  for (const segment of segments) {
    dir = join(dir, segment);
    await ensureDirectory(dir, key);
  }
  const path = join(dir, last);
  const stats = await lstatOrNull(path);
  if (stats?.isSymbolicLink()) throw symlinkRefused(key);
  if (stats !== null && !stats.isFile()) throw new ObjectKeyConflictError(key);
  return path;
}

async function ensureDirectory(dir: string, key: string): Promise<void> {
  let stats = await lstatOrNull(dir);
  if (stats === null) {
    try {
      await mkdir(dir);
      return;
    } catch (err) {
      // Another writer made it first; look at what it made.
      if (errnoCode(err) !== 'EEXIST') throw err;
    }
    stats = await lstatOrNull(dir);
  }
  if (stats?.isSymbolicLink()) throw symlinkRefused(key);
  if (stats === null || !stats.isDirectory()) throw new ObjectKeyConflictError(key);
}

/** `lstat`, with "nothing there" as `null`. */
export async function lstatOrNull(path: string): Promise<Stats | null> {
  try {
    return await lstat(path);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw err;
  }
}

/** The error for a key whose path meets a symbolic link. */
export function symlinkRefused(key: string): InvalidObjectKeyError {
  return new InvalidObjectKeyError(
    key,
    'resolves through a symbolic link inside the store; links are never followed',
  );
}
