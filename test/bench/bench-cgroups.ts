/**
 * A pair of long-lived v1 cgroups (pids and memory) for the raw-bwrap variants of
 * case 1, to measure what starting a sandbox from inside a cgroup costs apart from
 * creating and removing one. Needs root and the v1 hierarchy; null otherwise.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import { mkdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
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
