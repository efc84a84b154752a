/**
 * Names of per-command cgroups, and which leftover groups a sweep may try to remove.
 *
 * A node killed mid-command (SIGKILL, OOM, a lost pod) never runs the removal of its
 * command's groups; the kernel does not remove an empty cgroup by itself. Nodes sweep
 * such leftovers when their runner opens the hierarchy and from the periodic cleanup.
 *
 * Several nodes may share one host and one parent group (tests do; so do two node
 * processes in one container). A group is created a moment before its command's first
 * process joins it, so "empty" alone does not mean "left over": another node's group
 * in that window is empty too, and removing it would fail that node's command. Each
 * group is therefore named after the process that created it, `<pid>-<random>`, and a
 * sweep only considers groups whose creator is gone, plus its own groups that no
 * running command holds. The kernel refuses to remove a group that still has a process
 * (EBUSY), and the sweep checks `cgroup.procs` first as well, so a group in use is never
 * removed whatever its name says.
 *
 * Names that do not follow this form (another version's, an operator's) are not ours
 * to judge and are left alone. A pid reused by an unrelated process after the creator
 * died only delays the sweep of that creator's groups until the pid is free again.
 *
 * @module
 */

/** The name of a command group made by process `pid`; `random` keeps names unique. */
export function commandGroupName(pid: number, random: string): string {
  return `${pid}-${random}`;
}

/** The creator pid of a group named by {@link commandGroupName}, or null for any other name. */
export function groupCreator(name: string): number | null {
  const m = /^([1-9][0-9]{0,9})-[a-z0-9]+$/.exec(name);
  if (!m) return null;
  const pid = Number(m[1]);
  return Number.isSafeInteger(pid) ? pid : null;
}

/** What {@link sweepCandidates} decides from. */
export interface SweepView {
  /** This process's pid. */
  ownPid: number;
  /** Groups of commands this process is running now (created and not yet removed). */
  active: ReadonlySet<string>;
  /** Whether a process with this pid exists (any process: pids are not checked further). */
  alive: (pid: number) => boolean;
}

/**
 * The group names, among `names` (the child directories of the parent group), that a
 * sweep may try to remove: this process's groups that no running command holds, and
 * groups whose creator no longer exists. Whether a group is empty is for the caller to
 * check at removal time; this only rules out groups that may be about to be used.
 */
export function sweepCandidates(names: readonly string[], view: SweepView): string[] {
  return names.filter((name) => {
    const creator = groupCreator(name);
    if (creator === null) return false;
    if (creator === view.ownPid) return !view.active.has(name);
    return !view.alive(creator);
  });
}

/** True when a process with this pid exists (signal 0; EPERM still means it exists). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
