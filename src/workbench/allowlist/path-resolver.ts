/**
 * The filesystem side of the path check: is an absolute program path the very file that
 * the bare name runs from the system binary directories?
 *
 * A path passes only when it is literally `<system dir>/<name>` and resolves (after
 * symlinks) to the same device and inode as the first `<system dir>/<name>` in search
 * order, the file the bare name runs. Anything else, such as a copy of a shell named
 * `ls` or a symlink in a writable directory, does not.
 *
 * @module
 */

import { realpathSync, statSync } from 'node:fs';
import { posix } from 'node:path';
import type { PathResolution, PathResolver } from './invocation.js';

/** Where the sandbox's `PATH` finds programs, in search order. */
export const SYSTEM_BIN_DIRS: readonly string[] = [
  '/usr/local/bin',
  '/usr/bin',
  '/bin',
  '/usr/sbin',
  '/sbin',
];

/** Options of {@link createSystemPathResolver}. */
export interface SystemPathResolverOptions {
  /** System binary directories in search order; default {@link SYSTEM_BIN_DIRS}. */
  readonly binDirs?: readonly string[];
}

/** The device and inode of a regular file after symlinks, or null. */
function identity(path: string): { dev: number; ino: number; real: string } | null {
  try {
    const real = realpathSync(path);
    const st = statSync(real);
    return st.isFile() ? { dev: st.dev, ino: st.ino, real } : null;
  } catch {
    return null;
  }
}

/**
 * Builds a {@link PathResolver} backed by the filesystem. Relative paths never reach
 * it: the pure check refuses them first (the workspace is writable by the command, so
 * a file checked there could be swapped before it runs).
 */
export function createSystemPathResolver(options: SystemPathResolverOptions = {}): PathResolver {
  const binDirs = options.binDirs ?? SYSTEM_BIN_DIRS;
  return (path: string): PathResolution => {
    const dir = posix.dirname(path);
    const name = posix.basename(path);
    if (!posix.isAbsolute(path) || !binDirs.includes(dir) || `${dir}/${name}` !== path) {
      return { sameAsSystemBinary: false, detail: 'not in a system binary directory' };
    }
    const given = identity(path);
    if (given === null) return { sameAsSystemBinary: false, detail: 'no such program file' };
    for (const binDir of binDirs) {
      const system = identity(`${binDir}/${name}`);
      if (system === null) continue;
      return system.dev === given.dev && system.ino === given.ino
        ? { sameAsSystemBinary: true }
        : { sameAsSystemBinary: false, detail: `the system ${name} is ${system.real}` };
    }
    return { sameAsSystemBinary: false, detail: 'no system binary has that name' };
  };
}
