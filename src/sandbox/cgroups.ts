/**
 * Per-command cgroups (v1 `pids` and `memory` controllers) for the bwrap runner.
 *
 * Each command gets `<controller mount>/<the node's own cgroup>/<groupName>/<id>` in both
 * controllers. Nesting under the node's own cgroup (read from `/proc/self/cgroup`) keeps
 * commands inside whatever limits and accounting the node itself is under, and is the
 * layout a delegated cgroup subtree expects; on a host where the node sits at the root
 * this is `/sys/fs/cgroup/pids/memql/<id>`.
 *
 * The first process of the sandbox joins the group before it can fork (see the bwrap
 * runner's launcher), so every descendant is in it: {@link CommandCgroup.killAll} can
 * kill the whole tree, and the limits hold for the tree, not per process.
 *
 * @module
 */

import { mkdir, readFile, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

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
}

/** Whether per-command cgroups can be made here. */
export type CgroupV1Availability =
  | { ok: true; hierarchy: CgroupV1Hierarchy }
  | { ok: false; reason: string };

const CONTROLLERS = ['pids', 'memory'] as const;
type Controller = (typeof CONTROLLERS)[number];

/** The parent directories (one per controller) under which command groups are created. */
export class CgroupV1Hierarchy {
  private constructor(private readonly parents: Record<Controller, string>) {}

  /**
   * Finds the `pids` and `memory` v1 controllers, and checks that a group can be created
   * under the node's own cgroup. Never throws: an unusable hierarchy is an ordinary answer.
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
    const parents = {} as Record<Controller, string>;
    for (const controller of CONTROLLERS) {
      const mount = join(root, controller);
      if (!(await isFile(join(mount, 'cgroup.procs')))) {
        return {
          ok: false,
          reason: `cgroup v1 controller "${controller}" is not mounted at ${mount}`,
        };
      }
      const own = membership.get(controller) ?? '/';
      const parent = join(mount, own, groupName);
      try {
        await mkdir(parent, { recursive: true });
      } catch (err) {
        return {
          ok: false,
          reason: `cannot create ${parent}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        };
      }
      // Created again, per command, by create(); an idle node leaves nothing behind.
      await rmdir(parent).catch(() => {});
      parents[controller] = parent;
    }
    return { ok: true, hierarchy: new CgroupV1Hierarchy(parents) };
  }

  /** Creates the groups of one command and sets its limits. `id` must be a plain name. */
  async create(id: string, limits: CgroupLimits): Promise<CommandCgroup> {
    if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`invalid cgroup name ${JSON.stringify(id)}`);
    const dirs = {} as Record<Controller, string>;
    const made: string[] = [];
    try {
      for (const controller of CONTROLLERS) {
        const dir = join(this.parents[controller], id);
        await mkdirRetrying(this.parents[controller], dir);
        made.push(dir);
        dirs[controller] = dir;
      }
      if (limits.pidsMax !== undefined) {
        await writeFile(join(dirs.pids, 'pids.max'), `${limits.pidsMax}\n`);
      }
      if (limits.memoryBytes !== undefined) {
        await writeFile(join(dirs.memory, 'memory.limit_in_bytes'), `${limits.memoryBytes}\n`);
        const memsw = join(dirs.memory, 'memory.memsw.limit_in_bytes');
        // Without this, a command over its limit swaps instead of being stopped.
        if (await isFile(memsw)) await writeFile(memsw, `${limits.memoryBytes}\n`);
      }
    } catch (err) {
      for (const dir of made.reverse()) await rmdir(dir).catch(() => {});
      throw err;
    }
    return new CommandCgroup(dirs.pids, dirs.memory, [this.parents.pids, this.parents.memory]);
  }
}

/** The cgroups of one running command. */
export class CommandCgroup {
  /** @internal use {@link CgroupV1Hierarchy.create}. */
  constructor(
    private readonly pidsDir: string,
    private readonly memoryDir: string,
    private readonly parentDirs: readonly string[],
  ) {}

  /** `cgroup.procs` files a process writes its pid into to join this command's groups. */
  get procsFiles(): readonly string[] {
    return [join(this.pidsDir, 'cgroup.procs'), join(this.memoryDir, 'cgroup.procs')];
  }

  /** Pids currently in the group (either controller). */
  async pids(): Promise<number[]> {
    const found = new Set<number>();
    for (const file of this.procsFiles) {
      const text = await readFile(file, 'utf8').catch(() => '');
      for (const line of text.split('\n')) {
        const pid = Number.parseInt(line, 10);
        if (pid > 0) found.add(pid);
      }
    }
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
    const control = await readFile(join(this.memoryDir, 'memory.oom_control'), 'utf8').catch(
      () => '',
    );
    const kills = /^oom_kill (\d+)$/m.exec(control);
    if (kills) return Number(kills[1]) > 0;
    // Kernels before 4.13 have no oom_kill counter; hitting the limit is the best sign.
    const failcnt = await readFile(join(this.memoryDir, 'memory.failcnt'), 'utf8').catch(() => '0');
    return Number.parseInt(failcnt, 10) > 0;
  }

  /**
   * Kills what is left and removes both groups, then the shared parent directories when
   * no other command uses them. Call once, after the command ended.
   */
  async remove(): Promise<void> {
    await this.killAll();
    for (const dir of [this.pidsDir, this.memoryDir]) await rmdirRetrying(dir);
    for (const parent of this.parentDirs) await rmdir(parent).catch(() => {});
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

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** mkdir that survives another command removing the shared parent at the same moment. */
async function mkdirRetrying(parent: string, dir: string): Promise<void> {
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
async function rmdirRetrying(dir: string): Promise<void> {
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
