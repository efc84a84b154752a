/**
 * The host's top-level system directories as the bwrap sandbox must mirror them.
 *
 * @module
 */

import { lstat, readlink } from 'node:fs/promises';
import type { SystemDirEntry } from './bwrap-args.js';

/**
 * `/bin`, `/sbin`, `/lib`, ... as found on this host: links into /usr (merged /usr) or
 * directories. Exported for the benchmark's raw-bwrap baseline, which must pass the
 * same flags.
 */
export async function findSystemDirs(): Promise<SystemDirEntry[]> {
  const found: SystemDirEntry[] = [];
  for (const path of ['/bin', '/sbin', '/lib', '/lib64', '/lib32', '/libx32']) {
    const st = await lstat(path).catch(() => null);
    if (st?.isSymbolicLink()) found.push({ path, kind: 'symlink', target: await readlink(path) });
    else if (st?.isDirectory()) found.push({ path, kind: 'dir' });
  }
  return found;
}
