/**
 * The local half of sync: walk a workspace directory without following symbolic
 * links, and report its regular files with the stat fields the quick check uses.
 *
 * A command can make a tree deeper than the kernel's `PATH_MAX` (it works relative to
 * its current directory), and Node's `fs` only takes whole paths. The walk never
 * throws on one: the first entry of a branch whose host path would be too long is
 * reported in `refused` and not entered, and everything else is scanned as usual.
 *
 * @module
 */

import { type Dirent, lstatSync, type Stats } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { pathBytesFit, truncateForReport, utf8Bytes } from '../../files/index.js';
import type { LocalFile } from './diff.js';
import { MODE_MASK } from './diff.js';

/**
 * Entries lstat'ed between two turns of the event loop. The scan's lstat runs on the
 * loop's own thread: lstat never opens what it looks at (a FIFO cannot block it), it
 * costs microseconds on the workspace's local filesystem where a thread-pool round
 * trip costs several times that, and a batch this size holds the loop well under a
 * millisecond.
 */
const STAT_BATCH = 256;

/**
 * Why a scan left an entry out: `path_too_long`, its host path (the workspace root
 * included) is `PATH_MAX` bytes or more, so no path-based call can reach it.
 */
export type ScanRefusalReason = 'path_too_long';

/** An entry the scan could not reach, with everything below it. */
export interface RefusedEntry {
  /** Workspace-relative path, in full (shorten it before showing it). */
  path: string;
  reason: ScanRefusalReason;
}

/** Most refused entries a result names; its total counts them all. */
export const MAX_REPORTED_REFUSALS = 20;

/** Refused entries as a result shows them: the first few, paths shortened. */
export interface RefusalReport {
  /** How many entries were refused. */
  total: number;
  /** The first {@link MAX_REPORTED_REFUSALS}, in path order. */
  entries: RefusedEntry[];
}

/** The report of a scan's refused entries. Pure. */
export function reportRefusals(refused: readonly RefusedEntry[]): RefusalReport {
  return {
    total: refused.length,
    entries: refused
      .slice(0, MAX_REPORTED_REFUSALS)
      .map((r) => ({ path: truncateForReport(r.path), reason: r.reason })),
  };
}

/** What {@link scanWorkspace} found. */
export interface WorkspaceScan {
  /** Regular files, in path order. */
  files: LocalFile[];
  /**
   * Entries that are neither regular files nor directories (symbolic links, sockets,
   * fifos, devices), in path order. Never followed, never synced.
   */
  others: string[];
  /**
   * Entries that could not be reached (any type; for a directory, all of its
   * contents), in path order. Never synced; removable through their parent.
   */
  refused: RefusedEntry[];
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
 * left out; a missing `dir` is an empty scan; an entry too deep to reach is in
 * `refused`.
 */
export async function scanWorkspace(dir: string): Promise<WorkspaceScan> {
  const files: LocalFile[] = [];
  const others: string[] = [];
  const refused: RefusedEntry[] = [];
  const candidates: string[] = [];
  // Directories to list, with the byte length of their host path.
  const pending: { rel: string; bytes: number }[] = [{ rel: '', bytes: utf8Bytes(dir) }];
  let exists = true;
  while (pending.length > 0) {
    const { rel, bytes } = pending.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(rel === '' ? dir : join(dir, rel), { withFileTypes: true });
    } catch (err) {
      const code = errno(err);
      if (rel === '' && code === 'ENOENT') exists = false;
      // Gone, or replaced by a non-directory since it was listed: nothing to walk.
      if (code === 'ENOENT' || code === 'ENOTDIR') continue;
      if (code === 'ENAMETOOLONG' && rel !== '') {
        refused.push({ path: rel, reason: 'path_too_long' });
        continue;
      }
      throw err;
    }
    for (const entry of entries) {
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
      const pathBytes = bytes + 1 + utf8Bytes(entry.name);
      if (!pathBytesFit(pathBytes)) refused.push({ path, reason: 'path_too_long' });
      else if (entry.isDirectory()) pending.push({ rel: path, bytes: pathBytes });
      else if (entry.isFile()) candidates.push(path);
      else others.push(path);
    }
  }
  // The directory entry's type came from readdir; lstat confirms it and gives the
  // fields the quick check needs. A file swapped for something else in between is
  // reported as what it is now; one gone in between is left out.
  for (let i = 0; i < candidates.length; i++) {
    if (i > 0 && i % STAT_BATCH === 0) await yieldToLoop();
    const path = candidates[i]!;
    const st: Stats | undefined = lstatSync(join(dir, path), { throwIfNoEntry: false });
    if (st === undefined) continue;
    if (st.isFile()) {
      files.push({ path, size: st.size, mtimeMs: st.mtimeMs, mode: st.mode & MODE_MASK });
    } else if (!st.isDirectory()) {
      others.push(path);
    }
  }
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  others.sort();
  refused.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files, others, refused, exists };
}
