/**
 * Cgroups the benchmark makes for itself: a pair of long-lived v1 cgroups (pids and
 * memory) for the raw-bwrap variants of case 1, to measure what starting a sandbox from
 * inside a cgroup costs apart from creating and removing one; and a `cpu` group for case
 * 10 to run in. Each needs root and the v1 hierarchy.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseCgroupMembership } from '../../src/sandbox/cgroups/index.js';
import type { BenchContext } from './context.js';

const ROOT = '/sys/fs/cgroup';

/** The `cgroup.procs` files of the two groups, or null when they cannot be made here. */
export async function benchCgroups(ctx: BenchContext): Promise<string[] | null> {
  if (process.getuid?.() !== 0) return null;
  const name = `memql-bench-${randomBytes(4).toString('hex')}`;
  const dirs = ['pids', 'memory'].map((c) => join(ROOT, c, name));
  try {
    for (const d of dirs) {
      await mkdir(d);
      ctx.defer(() => removeWhenEmpty(d));
    }
  } catch {
    return null;
  }
  return dirs.map((d) => join(d, 'cgroup.procs'));
}

/**
 * Moves this process (all its threads; its children from then on) into a new v1 `cpu`
 * group below its own, and returns the function that moves it back and removes the
 * group. A node in a container sits in such a non-root group; at the root, the
 * kernel's autogroup feature would weigh each session (each sandbox) as one task,
 * hiding what happens to a node in a container. Null when it cannot be done here (no
 * root, no v1 `cpu`).
 */
export async function enterCpuGroup(): Promise<(() => Promise<void>) | null> {
  if (process.getuid?.() !== 0) return null;
  const own = parseCgroupMembership(await readFile('/proc/self/cgroup', 'utf8')).get('cpu');
  if (own === undefined) return null;
  const home = join(ROOT, 'cpu', own);
  const dir = join(home, `memql-bench-${randomBytes(4).toString('hex')}`);
  try {
    await mkdir(dir);
    await writeFile(join(dir, 'cgroup.procs'), `${process.pid}\n`);
  } catch {
    await rmdir(dir).catch(() => {});
    return null;
  }
  return async () => {
    await writeFile(join(home, 'cgroup.procs'), `${process.pid}\n`);
    // The runners' parent of command groups, if a command is still being removed.
    await removeWhenEmpty(join(dir, 'memql'));
    await removeWhenEmpty(dir);
  };
}

async function removeWhenEmpty(dir: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      await rmdir(dir);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY') throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
