/**
 * Per-command cgroups (v1 `pids`, `memory` and `cpu` controllers) for the bwrap runner.
 *
 * Each command gets `<controller mount>/<the node's own cgroup>/<groupName>/<name>` in
 * every controller. Nesting under the node's own cgroup (read from `/proc/self/cgroup`)
 * keeps commands inside whatever limits and accounting the node itself is under, and is
 * the layout a delegated cgroup subtree expects; on a host where the node sits at the
 * root this is `/sys/fs/cgroup/pids/memql/<name>`. `pids` and `memory` are required;
 * `cpu` is used where it is mounted (without it commands have no CPU limit).
 *
 * The first process of the sandbox joins the groups before it can fork (see the bwrap
 * runner's launcher), so every descendant is in them: {@link CommandCgroup.killAll} can
 * kill the whole tree, and the limits hold for the tree, not per process.
 *
 * Groups a killed node left behind are removed by {@link CgroupV1Hierarchy.sweepLeftovers},
 * when the hierarchy is opened and from the periodic cleanup; see `cgroup-leftovers.ts`
 * for which groups a sweep may take.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isFile, mkdirRetrying, readProcs, rmdirRetrying } from './cgroup-fs.js';
import { commandGroupName, processExists, sweepCandidates } from './cgroup-leftovers.js';
import { CommandCgroup } from './command-cgroup.js';

/** Where to find the cgroup v1 hierarchy; injectable for tests. */
export interface CgroupV1Options {
  /** Where the v1 controllers are mounted, one directory per controller. Default `/sys/fs/cgroup`. */
  root?: string;
  /** The node's own membership, in `/proc/<pid>/cgroup` format. Default `/proc/self/cgroup`. */
  selfCgroupFile?: string;
  /** Directory created under the node's cgroup to hold per-command groups. Default `memql`. */
  groupName?: string;
}

/** Limits of one command's cgroup; absent means not limited. */
export interface CgroupLimits {
  /** `pids.max`: processes and threads, all descendants included. */
  pidsMax?: number;
  /** `memory.limit_in_bytes`, and `memory.memsw.limit_in_bytes` when swap accounting exists. */
  memoryBytes?: number;
  /**
   * CPU time per wall-clock time, in CPUs (`cpu.cfs_quota_us` over `cpu.cfs_period_us`).
   * Absent: no group under the `cpu` controller at all.
   */
  cpus?: number;
}

/** Whether per-command cgroups can be made here. */
export type CgroupV1Availability =
  | { ok: true; hierarchy: CgroupV1Hierarchy }
  | { ok: false; reason: string };

const REQUIRED = ['pids', 'memory'] as const;
type Controller = (typeof REQUIRED)[number] | 'cpu';

/** `cpu.cfs_period_us` of every command group: the kernel's default, 100 ms. */
export const CFS_PERIOD_US = 100_000;

/** `cpu.cfs_quota_us` for `cpus` CPUs over {@link CFS_PERIOD_US}; the kernel's floor is 1 ms. */
export function cfsQuotaUs(cpus: number): number {
  return Math.max(1000, Math.round(cpus * CFS_PERIOD_US));
}

/**
 * Groups of commands this process runs now, by name, across every hierarchy it opened.
 * The creator pid in a group's name stands for the process, not for one runner, so the
 * record of what that pid still uses has to be the process's too.
 */
const ACTIVE_GROUPS = new Set<string>();

/** The parent directories (one per controller) under which command groups are created. */
export class CgroupV1Hierarchy {
  private constructor(
    private readonly parents: Readonly<Partial<Record<Controller, string>>>,
    /** Why commands get no CPU limit here, or null when they do. */
    readonly cpuUnavailable: string | null,
  ) {}

  /**
   * Finds the v1 controllers, checks that a group can be created under the node's own
   * cgroup, and removes groups left over by killed nodes. Never throws: an unusable
   * hierarchy is an ordinary answer.
   */
  static async open(options: CgroupV1Options = {}): Promise<CgroupV1Availability> {
    const root = options.root ?? '/sys/fs/cgroup';
    const selfFile = options.selfCgroupFile ?? '/proc/self/cgroup';
    const groupName = options.groupName ?? 'memql';
    let membership: Map<string, string>;
    try {
      membership = parseCgroupMembership(await readFile(selfFile, 'utf8'));
    } catch (err) {
      return { ok: false, reason: `cannot read ${selfFile}: ${(err as Error).message}` };
    }
    const parents: Partial<Record<Controller, string>> = {};
    let cpuUnavailable: string | null = null;
    for (const controller of [...REQUIRED, 'cpu'] as const) {
      const mount = join(root, controller);
      let reason: string | null = null;
      const parent = join(mount, membership.get(controller) ?? '/', groupName);
      if (!(await isFile(join(mount, 'cgroup.procs')))) {
        reason = `cgroup v1 controller "${controller}" is not mounted at ${mount}`;
      } else {
        reason = await mkdir(parent, { recursive: true }).then(
          () => null,
          (err: NodeJS.ErrnoException) => `cannot create ${parent}: ${err.code ?? err.message}`,
        );
      }
      if (reason === null) parents[controller] = parent;
      else if (controller === 'cpu') cpuUnavailable = reason;
      else return { ok: false, reason };
    }
    const hierarchy = new CgroupV1Hierarchy(parents, cpuUnavailable);
    // Also removes the parents again when nothing is left in them: an idle node leaves
    // nothing behind; create() makes them again per command.
    await hierarchy.sweepLeftovers();
    return { ok: true, hierarchy };
  }

  /** Creates the groups of one command and sets its limits. */
  async create(limits: CgroupLimits): Promise<CommandCgroup> {
    const name = commandGroupName(process.pid, randomBytes(8).toString('hex'));
    ACTIVE_GROUPS.add(name);
    const dirs: Partial<Record<Controller, string>> = {};
    const made: string[] = [];
    try {
      for (const [controller, parent] of Object.entries(this.parents) as [Controller, string][]) {
        // Without a CPU limit the command shares the node's cpu group, as it would without
        // the controller: a group of its own would already weigh it as one task.
        if (controller === 'cpu' && limits.cpus === undefined) continue;
        const dir = join(parent, name);
        await mkdirRetrying(parent, dir);
        made.push(dir);
        dirs[controller] = dir;
      }
      await writeLimits(dirs, limits);
    } catch (err) {
      for (const dir of made.reverse()) await rmdirRetrying(dir).catch(() => {});
      ACTIVE_GROUPS.delete(name);
      throw err;
    }
    return new CommandCgroup(
      {
        name,
        dirs: made,
        memoryDir: dirs.memory ?? '',
        parentDirs: Object.values(this.parents),
      },
      () => ACTIVE_GROUPS.delete(name),
    );
  }

  /**
   * Removes command groups left behind by nodes that were killed before they could
   * remove them: groups whose creator process is gone, and this process's own groups
   * that no running command holds, when they hold no process. Then removes the shared
   * parents when nothing is left in them. Returns how many group directories (one per
   * controller) it removed. Never throws; a group it cannot remove is left for the next
   * sweep.
   */
  async sweepLeftovers(): Promise<number> {
    let removed = 0;
    for (const parent of Object.values(this.parents)) {
      const names = await readdir(parent, { withFileTypes: true }).then(
        (entries) => entries.filter((e) => e.isDirectory()).map((e) => e.name),
        () => [] as string[],
      );
      const view = { ownPid: process.pid, active: ACTIVE_GROUPS, alive: processExists };
      for (const name of sweepCandidates(names, view)) {
        const dir = join(parent, name);
        // A process in it means a sandbox still runs there: never ours to remove. The
        // kernel refuses too (EBUSY); this keeps the rule visible.
        if ((await readProcs(join(dir, 'cgroup.procs'))).length > 0) continue;
        await rmdir(dir).then(
          () => {
            removed += 1;
          },
          () => {
            // Joined since the read, gone already, or not a leaf: the next sweep decides.
          },
        );
      }
      await rmdir(parent).catch(() => {});
    }
    return removed;
  }
}

async function writeLimits(
  dirs: Partial<Record<Controller, string>>,
  limits: CgroupLimits,
): Promise<void> {
  if (dirs.pids && limits.pidsMax !== undefined) {
    await writeFile(join(dirs.pids, 'pids.max'), `${limits.pidsMax}\n`);
  }
  if (dirs.memory && limits.memoryBytes !== undefined) {
    await writeFile(join(dirs.memory, 'memory.limit_in_bytes'), `${limits.memoryBytes}\n`);
    const memsw = join(dirs.memory, 'memory.memsw.limit_in_bytes');
    // Without this, a command over its limit swaps instead of being stopped.
    if (await isFile(memsw)) await writeFile(memsw, `${limits.memoryBytes}\n`);
  }
  if (dirs.cpu && limits.cpus !== undefined) {
    await writeFile(join(dirs.cpu, 'cpu.cfs_period_us'), `${CFS_PERIOD_US}\n`);
    try {
      await writeFile(join(dirs.cpu, 'cpu.cfs_quota_us'), `${cfsQuotaUs(limits.cpus)}\n`);
    } catch (err) {
      // v1 refuses a quota above an ancestor's (the node's own cgroup may be limited to
      // less than the setting): that ancestor's tighter limit holds for the command.
      if ((err as NodeJS.ErrnoException).code !== 'EINVAL') throw err;
    }
  }
}

/**
 * Parses `/proc/<pid>/cgroup` (`hierarchy-id:controller,list:/path` per line) into a map
 * from controller to path. The v2 line (`0::/path`) has no controller and is skipped.
 */
export function parseCgroupMembership(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const path = line.slice(second + 1);
    for (const controller of line.slice(first + 1, second).split(',')) {
      if (controller !== '') out.set(controller, path);
    }
  }
  return out;
}
