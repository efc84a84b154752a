/**
 * File operations on cgroup directories that the v1 hierarchy and its command groups
 * share: the races of creating and removing groups next to other commands and nodes.
 *
 * @module
 */

import { mkdir, readFile, rmdir, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** True when `path` is a regular file (a controller's control file, for instance). */
export async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** Pids listed in a `cgroup.procs` file; none when it cannot be read (the group is gone). */
export async function readProcs(file: string): Promise<number[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const pids: number[] = [];
  for (const line of text.split('\n')) {
    const pid = Number.parseInt(line, 10);
    if (pid > 0) pids.push(pid);
  }
  return pids;
}

/** mkdir that survives another command removing the shared parent at the same moment. */
export async function mkdirRetrying(parent: string, dir: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await mkdir(parent, { recursive: true });
      await mkdir(dir);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 5) throw err;
    }
  }
}

/** rmdir of a cgroup, which is EBUSY for a moment after its last process died. */
export async function rmdirRetrying(dir: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await rmdir(dir);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY' || attempt >= 50) throw err;
      await sleep(20);
    }
  }
}
