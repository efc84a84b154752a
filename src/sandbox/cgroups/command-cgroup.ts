/**
 * The cgroups of one running command: one directory per v1 controller (`pids`,
 * `memory`, and `cpu` where it is mounted), made by {@link CgroupV1Hierarchy.create}.
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import { rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readProcs, rmdirRetrying } from './cgroup-fs.js';

/** Where one command's groups are. */
export interface CommandCgroupDirs {
  /** The group's name, the same under every controller. */
  name: string;
  /** The group directory under each controller, the memory one included. */
  dirs: readonly string[];
  /** The group directory under the `memory` controller (for the OOM check). */
  memoryDir: string;
  /** The shared parents, removed after the group when no other command uses them. */
  parentDirs: readonly string[];
}

/** The cgroups of one running command. */
export class CommandCgroup {
  /**
   * @internal use {@link CgroupV1Hierarchy.create}. `onRemoved` tells the hierarchy the
   * command is over, so its sweep may take the group if removing it failed here.
   */
  constructor(
    private readonly where: CommandCgroupDirs,
    private readonly onRemoved: () => void = () => {},
  ) {}

  /** The group's name (the same under every controller). */
  get name(): string {
    return this.where.name;
  }

  /** `cgroup.procs` files a process writes its pid into to join this command's groups. */
  get procsFiles(): readonly string[] {
    return this.where.dirs.map((dir) => join(dir, 'cgroup.procs'));
  }

  /** Pids currently in the group (any controller). */
  async pids(): Promise<number[]> {
    const found = new Set<number>();
    for (const file of this.procsFiles) for (const pid of await readProcs(file)) found.add(pid);
    return [...found];
  }

  /**
   * SIGKILLs every process in the group, again and again until it is empty (a process
   * may fork between the read and the kill). Returns false if it was still not empty
   * after `withinMs`.
   */
  async killAll(withinMs = 5000): Promise<boolean> {
    const deadline = Date.now() + withinMs;
    for (;;) {
      const pids = await this.pids();
      if (pids.length === 0) return true;
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      if (Date.now() > deadline) return false;
      await sleep(10);
    }
  }

  /** True when the kernel's OOM killer killed a process of this group. */
  async oomKilled(): Promise<boolean> {
    return (await this.oomEvents()) > 0;
  }

  /**
   * How many processes of this group the OOM killer killed so far (on kernels before
   * 4.13, which have no such counter: how often the group hit its limit). A group that
   * outlives one command (a warm sandbox's) compares the count before and after it.
   */
  async oomEvents(): Promise<number> {
    // A control file of the kernel's, a few dozen bytes produced on read: read in the
    // caller's turn, which costs less than the five thread-pool hops of an async read
    // that every warm command would pay twice.
    const read = (name: string, fallback: string) => {
      try {
        return readFileSync(join(this.where.memoryDir, name), 'utf8');
      } catch {
        return fallback;
      }
    };
    const kills = /^oom_kill (\d+)$/m.exec(read('memory.oom_control', ''));
    if (kills) return Number(kills[1]);
    return Number.parseInt(read('memory.failcnt', '0'), 10) || 0;
  }

  /**
   * Kills what is left and removes every group, then the shared parent directories
   * when no other command uses them. Call once, after the command ended.
   */
  async remove(): Promise<void> {
    try {
      await this.killAll();
      for (const dir of this.where.dirs) await rmdirRetrying(dir);
      for (const parent of this.where.parentDirs) await rmdir(parent).catch(() => {});
    } finally {
      this.onRemoved();
    }
  }
}
