/**
 * cgroup v1 limits of one command (memory, pids, CPU) and the leftovers of killed
 * nodes: a group per command, made before it starts and removed after it ends.
 *
 * @module
 */

export {
  commandGroupName,
  groupCreator,
  processExists,
  sweepCandidates,
} from './cgroup-leftovers.js';
export {
  CFS_PERIOD_US,
  type CgroupLimits,
  CgroupV1Hierarchy,
  type CgroupV1Options,
  cfsQuotaUs,
  parseCgroupMembership,
} from './cgroups.js';
export type { CommandCgroup } from './command-cgroup.js';
