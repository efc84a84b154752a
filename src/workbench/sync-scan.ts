/**
 * The local half of sync: walk a workspace directory without following symbolic
 * links, and report its regular files with the stat fields the quick check uses.
 *
 * @module
 */

import type { Dirent } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { LocalFile } from './sync-diff.js';
import { MODE_MASK } from './sync-diff.js';
import { mapLimit } from './sync-pool.js';

/** Entries stat'ed at once during a scan. */
const STAT_CONCURRENCY = 32;

/** What {@link scanWorkspace} found. */
export interface WorkspaceScan {
  /** Regular files, in path order. */
  files: LocalFile[];
  /**
   * Entries that are neither regular files nor directories (symbolic links, sockets,
   * fifos, devices), in path order. Never followed, never synced.
   */
  others: string[];
  /** Whether the directory existed at all. */
  exists: boolean;
}

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Lists every regular file under `dir`. Directories are entered only when they are
 * real directories (a link to one is reported in `others`, not entered), so the walk
 * never leaves `dir`. Paths are relative, with `/`. An entry that vanishes mid-scan is
 * left out; a missing `dir` is an empty scan.
 */
export async function scanWorkspace(dir: string): Promise<WorkspaceScan> {
  const files: LocalFile[] = [];
  const others: string[] = [];
  const candidates: string[] = [];
  const pending: string[] = [''];
  let exists = true;
  while (pending.length > 0) {
    const rel = pending.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(rel === '' ? dir : join(dir, rel), { withFileTypes: true });
    } catch (err) {
      const code = errno(err);
      if (rel === '' && code === 'ENOENT') exists = false;
      // Gone, or replaced by a non-directory since it was listed: nothing to walk.
      if (code === 'ENOENT' || code === 'ENOTDIR') continue;
      throw err;
    }
    for (const entry of entries) {
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) pending.push(path);
      else if (entry.isFile()) candidates.push(path);
      else others.push(path);
    }
  }
  // The directory entry's type came from readdir; lstat confirms it and gives the
  // fields the quick check needs. A file swapped for something else in between is
  // reported as what it is now.
  const stats = await mapLimit(candidates, STAT_CONCURRENCY, async (path) => {
    try {
      return await lstat(join(dir, path));
    } catch (err) {
      if (errno(err) === 'ENOENT') return null;
      throw err;
    }
  });
  candidates.forEach((path, i) => {
    const st = stats[i];
    if (!st) return;
    if (st.isFile()) {
      files.push({ path, size: st.size, mtimeMs: st.mtimeMs, mode: st.mode & MODE_MASK });
    } else if (!st.isDirectory()) {
      others.push(path);
    }
  });
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  others.sort();
  return { files, others, exists };
}
