/**
 * The directories of a filesystem store under its base directory: `objects/` for
 * object files and `.tmp/` for bodies being written. Both sit on one filesystem,
 * so a finished body moves into place with one atomic rename.
 *
 * @module
 */

import { lstat, mkdir, readdir, realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ObjectStoreUnavailableError } from './errors.js';

/** Absolute, symlink-free paths of a store's directories. */
export interface FsLayout {
  objectsDir: string;
  tmpDir: string;
}

/**
 * Age after which a temp file is a leftover of a process that died mid-write; no
 * write takes this long.
 */
const STALE_TEMP_MS = 60 * 60 * 1000;

/**
 * Creates the directories under `baseDir` (and `baseDir` itself) if missing, and
 * clears temp files left by a crash. Fails with `object_store_unavailable` when
 * the directories cannot be made or are not plain directories.
 */
export async function createLayout(baseDir: string): Promise<FsLayout> {
  try {
    await mkdir(baseDir, { recursive: true });
    const root = await realpath(baseDir);
    const layout = { objectsDir: join(root, 'objects'), tmpDir: join(root, '.tmp') };
    for (const dir of [layout.objectsDir, layout.tmpDir]) {
      await mkdir(dir, { recursive: true });
      if (!(await lstat(dir)).isDirectory()) {
        throw new ObjectStoreUnavailableError(`${dir} must be a directory, not a link or file`);
      }
    }
    await removeStaleTempFiles(layout.tmpDir);
    return layout;
  } catch (err) {
    if (err instanceof ObjectStoreUnavailableError) throw err;
    const reason = err instanceof Error ? err.message : String(err);
    throw new ObjectStoreUnavailableError(`cannot prepare store directory ${baseDir}: ${reason}`, {
      cause: err,
    });
  }
}

async function removeStaleTempFiles(tmpDir: string): Promise<void> {
  const cutoff = Date.now() - STALE_TEMP_MS;
  for (const name of await readdir(tmpDir)) {
    const path = join(tmpDir, name);
    const stats = await lstat(path).catch(() => null);
    if (stats !== null && stats.mtimeMs < cutoff) await rm(path, { force: true, recursive: true });
  }
}
