/**
 * Staging the workspace so that the sandbox's mount table shows no host path.
 *
 * `/proc/self/mountinfo` shows, for every mount, the path of its root inside its own
 * filesystem. For a bind mount that is the bound directory's path from the root of the
 * host filesystem that holds it (`/var/lib/memql/workbenches/<runId>`), however bwrap
 * was told to bind it: by path, through `--bind-fd`/`/proc/self/fd/N`, or from a
 * staging bind mount elsewhere, all tried, all show the same path. Only a filesystem of
 * its own hides it. So the runner, as root, in a private mount namespace that only the
 * command's launch chain lives in, mounts an overlay over the workspace's own path:
 * upper layer the workspace itself, lower layer an empty directory. bwrap then binds
 * that. The overlay's mount options are shown as given, so they are given relative to
 * a scratch directory beside the workspace (`lowerdir=lower,upperdir=upper,workdir=work`,
 * with `upper` a symlink to the workspace); its root is `/`.
 *
 * With an empty lower layer every file is the upper layer's own: writes, renames, links
 * and deletes go straight to the workspace (no copy-up, no whiteouts, no redirects), and
 * the host sees the plain directory. The overlay goes with the namespace when the
 * command's last process ends; the scratch directory is removed after the command.
 * Overlay stores `trusted.overlay.*` attributes on the workspace's root directory and
 * nothing on its files.
 *
 * Staging needs root (the node drops to uid 10001 only after it) and a filesystem that
 * can be an overlay's upper layer; it is checked once per parent directory, and where it
 * cannot work, commands run with the plain bind and the runner says so.
 *
 * Scratch directories are named `.memql-stage-<pid>-<random>`: never a run id (those
 * start with a letter or digit). A node killed mid-command leaves one behind; the next
 * runner to stage a workspace in that parent (the node, restarted) removes it, its
 * creator being gone.
 *
 * @module
 */

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, rm, symlink, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { commandGroupName, groupCreator, processExists } from '../cgroups/index.js';

/** Start of every scratch directory's name. */
export const STAGE_PREFIX = '.memql-stage-';

const UNSHARE = '/usr/bin/unshare';
const MOUNT = '/usr/bin/mount';
const OVERLAY_OPTIONS =
  'lowerdir=lower,upperdir=upper,workdir=work,index=off,redirect_dir=off,metacopy=off';

/**
 * Runs as root in the new mount namespace: mounts the overlay over the workspace's path
 * (`$2`), with options relative to the scratch directory (`$1`), then execs the rest
 * under `env -i` (`cd` made the shell export `PWD` and `OLDPWD`, a host path that bwrap's
 * init would otherwise carry in `/proc/1/environ`). Exits 125, before anything of the
 * sandbox starts, when the mount fails.
 */
const STAGE_SCRIPT = `cd "$1" && ${MOUNT} -n -t overlay memql-workspace -o ${OVERLAY_OPTIONS} "$2" || exit 125; cd / && shift 2 && exec /usr/bin/env -i "$@"`;

/**
 * The argv that stages `workspaceDir` from `stageDir` and then runs whatever argv is
 * appended to it. It must run as root in a private mount namespace (the launch chain's).
 */
export function stageCommand(stageDir: string, workspaceDir: string): string[] {
  return ['/bin/sh', '-c', STAGE_SCRIPT, 'memql-stage', stageDir, workspaceDir];
}

/** One command's staging: the argv to put in front of the rest, and the cleanup. */
export interface Stage {
  /** Prepend to the argv that runs the sandbox (see {@link stageCommand}). */
  readonly command: readonly string[];
  /** Removes the scratch directory. Never throws. */
  release(): Promise<void>;
}

/** Stages workspaces for the bwrap runner; one per runner. */
export class WorkspaceStaging {
  /** Per parent directory: null when staging works there, else why not. */
  private readonly parents = new Map<string, Promise<string | null>>();

  /**
   * Prepares `workspaceDir` for one command, or says why it cannot be staged (the
   * command then runs with the plain bind).
   */
  async stage(workspaceDir: string): Promise<Stage | { reason: string }> {
    const parent = dirname(workspaceDir);
    const unsupported = await this.support(parent);
    if (unsupported !== null) return { reason: unsupported };
    const [ws, up] = await Promise.all([lstat(workspaceDir), lstat(parent)]);
    if (ws.dev !== up.dev) {
      return { reason: 'the workspace directory is a mount point of its own' };
    }
    const name = await this.makeScratch(parent, workspaceDir);
    return {
      command: stageCommand(join(parent, name), workspaceDir),
      release: () => this.removeScratch(parent, name),
    };
  }

  /** Whether staging works in `parent`; found out once (leftovers there are swept first). */
  support(parent: string): Promise<string | null> {
    let found = this.parents.get(parent);
    if (found === undefined) {
      found = this.sweep(parent).then(() => this.check(parent));
      this.parents.set(parent, found);
    }
    return found;
  }

  /** Mounts and unmounts a trial overlay in `parent`: null when it works, else why not. */
  private async check(parent: string): Promise<string | null> {
    let name: string;
    try {
      name = await this.makeScratch(parent, null);
    } catch (err) {
      return `cannot make a scratch directory in ${parent}: ${(err as Error).message}`;
    }
    try {
      const stage = stageCommand(join(parent, name), join(parent, name, 'target'));
      await promisify(execFile)(
        UNSHARE,
        ['--mount', '--propagation', 'private', ...stage, '/bin/true'],
        { env: {}, timeout: 30_000 },
      );
      return null;
    } catch (err) {
      const e = err as Error & { stderr?: string; code?: number | string };
      const detail = e.stderr?.trim() || e.message;
      return `cannot mount an overlay on ${parent} (${detail.slice(0, 500)})`;
    } finally {
      await this.removeScratch(parent, name);
    }
  }

  /**
   * Makes `<parent>/.memql-stage-<pid>-<random>/` with an empty `lower/`, `work/`, and
   * `upper` linking to `upper` (or to a fresh `target/` inside when null, for a trial).
   */
  private async makeScratch(parent: string, upper: string | null): Promise<string> {
    const name = `${STAGE_PREFIX}${commandGroupName(process.pid, randomBytes(6).toString('hex'))}`;
    const dir = join(parent, name);
    await mkdir(dir, { mode: 0o700 });
    try {
      await mkdir(join(dir, 'lower'));
      await mkdir(join(dir, 'work'));
      if (upper === null) await mkdir(join(dir, 'target'));
      await symlink(upper ?? join(dir, 'target'), join(dir, 'upper'));
    } catch (err) {
      await this.removeScratch(parent, name);
      throw err;
    }
    return name;
  }

  private async removeScratch(parent: string, name: string): Promise<void> {
    await removeScratchDir(join(parent, name));
  }

  /**
   * Removes scratch directories in `parent` whose creating process is gone. This
   * process's own are never swept: other runners in it may be using them, and each
   * command removes its own.
   */
  private async sweep(parent: string): Promise<number> {
    const names = await readdir(parent).catch(() => [] as string[]);
    const stale = names
      .filter((n) => n.startsWith(STAGE_PREFIX))
      .map((n) => n.slice(STAGE_PREFIX.length))
      .filter((n) => {
        const creator = groupCreator(n);
        return creator !== null && creator !== process.pid && !processExists(creator);
      });
    for (const name of stale) await removeScratchDir(join(parent, STAGE_PREFIX + name));
    return stale.length;
  }
}

/** Removes a scratch directory; its `upper` link goes first, so nothing can follow it. */
async function removeScratchDir(dir: string): Promise<void> {
  await unlink(join(dir, 'upper')).catch(() => {});
  await rm(dir, { recursive: true, force: true }).catch(() => {});
}
