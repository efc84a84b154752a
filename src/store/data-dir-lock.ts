/**
 * The lock of an embedded database directory. PGlite keeps the database in files that
 * one process may open: a second process opening them too would write over the first
 * one's pages (or, with an empty directory of its own, quietly start a second,
 * empty database). So the directory holds `memql.lock` with the holder's pid while it
 * is open, and a second process is refused with that pid. A lock whose process is gone
 * (the holder was killed) is taken over.
 *
 * @module
 */

import { open, readFile, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/** The lock file's name inside the data directory. */
export const LOCK_FILE = 'memql.lock';

/** The directory is open in another live process. */
export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError';
  constructor(
    /** The locked directory. */
    readonly dataDir: string,
    /** The process holding it. */
    readonly holderPid: number,
  ) {
    super(
      `the embedded database in ${dataDir} is open in process ${holderPid} (${join(dataDir, LOCK_FILE)}); ` +
        'one process at a time may open it. Stop that process first, or point MEMQL_DATA_DIR at another directory',
    );
  }
}

/** The directories this process holds, resolved. */
const held = new Set<string>();

/** A held lock. */
export interface DataDirLock {
  /** Removes the lock file, if it is still this process's. */
  release(): Promise<void>;
}

/** Whether process `pid` is alive (one this process may not signal counts as alive). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function holderOf(path: string): Promise<number | null> {
  try {
    const text = (await readFile(path, 'utf8')).trim();
    return /^\d+$/.test(text) ? Number(text) : null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Takes the lock of `dataDir` (which must exist) for this process, or throws
 * {@link DataDirLockedError} naming the live process that holds it. The same process
 * opening the directory twice is refused too.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  const key = resolve(dataDir);
  if (held.has(key)) throw new DataDirLockedError(dataDir, process.pid);
  const path = join(dataDir, LOCK_FILE);
  const mine = `${process.pid}\n`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const file = await open(path, 'wx', 0o644);
      try {
        await file.writeFile(mine);
        await file.sync();
      } finally {
        await file.close();
      }
      held.add(key);
      let released = false;
      return {
        async release() {
          if (released) return;
          released = true;
          held.delete(key);
          if ((await holderOf(path)) === process.pid) await unlink(path).catch(() => {});
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = await holderOf(path);
    // Our own pid in a lock this process does not hold is a dead holder's: a restarted
    // container's process often gets the pid its predecessor had.
    if (holder !== null && holder !== process.pid && alive(holder)) {
      throw new DataDirLockedError(dataDir, holder);
    }
    // The holder is gone (or never wrote its pid): take the lock over, once. A
    // process that takes it first in between wins, and the next round names it.
    await unlink(path).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }
  const holder = await holderOf(path);
  throw new DataDirLockedError(dataDir, holder ?? -1);
}
