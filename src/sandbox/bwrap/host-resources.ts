/**
 * What a bwrap sandbox takes from the host besides its processes: a cgroup of its own
 * (from the v1 hierarchy, looked up once), the staging overlay that hides its
 * workspace's host path, and the host's system directories it binds. Each is used where
 * the node can have it; where it cannot, the sandbox runs without it and the node says
 * so once.
 *
 * @module
 */

import type { Logger } from '../../telemetry/index.js';
import type { CommandCgroup } from '../cgroups/index.js';
import { type CgroupLimits, CgroupV1Hierarchy, type CgroupV1Options } from '../cgroups/index.js';
import type { SystemDirEntry } from './bwrap-args.js';
import { findSystemDirs } from './system-dirs.js';
import { type Stage, WorkspaceStaging } from './workspace-staging.js';

/** What {@link HostResources} is made from (the runner's options of the same names). */
export interface HostResourceOptions {
  /** Where to create per-command cgroups, or `false` to never use them. */
  readonly cgroups: CgroupV1Options | false | undefined;
  /** Whether the node drops from root to the sandbox uid (it can then make both). */
  readonly dropPrivileges: boolean;
  /** Stage workspaces; default: when dropping privileges. */
  readonly stageWorkspace: boolean | undefined;
  readonly logger: Logger | undefined;
}

/** The host's cgroups, staging and system directories, as the bwrap runner uses them. */
export class HostResources {
  private cgroups: Promise<CgroupV1Hierarchy | string> | undefined;
  private systemDirs: Promise<SystemDirEntry[]> | undefined;
  private readonly staging: WorkspaceStaging | null;
  /** Why workspaces are not staged at all, or null when they are where possible. */
  private readonly noStagingReason: string | null;
  private warnedNoStaging = false;

  constructor(private readonly options: HostResourceOptions) {
    const stage = options.stageWorkspace ?? options.dropPrivileges;
    this.staging = stage && options.dropPrivileges ? new WorkspaceStaging() : null;
    this.noStagingReason =
      this.staging !== null
        ? null
        : options.stageWorkspace === false
          ? 'disabled by configuration'
          : 'the node does not run as root';
  }

  /** Why a workspace under `parent` would show its host path, or null/undefined when it would not. */
  async unstagedReason(parent: string): Promise<string | null | undefined> {
    return this.noStagingReason ?? (await this.staging?.support(parent));
  }

  /** The command's cgroups, or null without them. */
  async makeCgroup(limits: CgroupLimits): Promise<CommandCgroup | null> {
    const hierarchy = await this.cgroupHierarchy();
    return typeof hierarchy === 'string' ? null : hierarchy.create(limits);
  }

  async removeCgroup(cgroup: CommandCgroup | null): Promise<void> {
    await cgroup?.remove().catch((err: unknown) => {
      this.options.logger?.warn({ err }, 'bwrap runner: could not remove a command cgroup');
    });
  }

  /** The workspace's staging, or null (said once) when it runs with the plain bind. */
  async stage(workspaceDir: string): Promise<Stage | null> {
    const staged = this.staging ? await this.staging.stage(workspaceDir) : null;
    if (staged !== null && !('reason' in staged)) return staged;
    if (!this.warnedNoStaging) {
      this.warnedNoStaging = true;
      this.options.logger?.warn(
        { reason: staged?.reason ?? this.noStagingReason },
        "bwrap runner: the sandbox's mount table shows the workspace's host path",
      );
    }
    return null;
  }

  /** The cgroup hierarchy, or why there is none; looked up once. */
  cgroupHierarchy(): Promise<CgroupV1Hierarchy | string> {
    this.cgroups ??= (async () => {
      if (this.options.cgroups === false) return 'disabled by configuration';
      if (!this.options.dropPrivileges) return 'the node does not run as root';
      const found = await CgroupV1Hierarchy.open(this.options.cgroups || {});
      if (found.ok) return found.hierarchy;
      this.options.logger?.warn(
        { reason: found.reason },
        'bwrap runner: no per-command cgroups; commands run without memory, process and CPU limits',
      );
      return found.reason;
    })();
    return this.cgroups;
  }

  /** `/bin`, `/lib`, `/lib64`, `/sbin` as links into /usr (merged /usr) or directories. */
  hostSystemDirs(): Promise<SystemDirEntry[]> {
    this.systemDirs ??= findSystemDirs();
    return this.systemDirs;
  }
}
