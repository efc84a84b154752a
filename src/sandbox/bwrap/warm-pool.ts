/**
 * The warm pool of one bwrap runner: sandboxes started ahead of any run, so that a
 * run's first command finds its sandbox ready instead of paying for the launch chain,
 * the namespaces, the cgroup, the staging overlay and the agent's start.
 *
 * Each pooled sandbox is a warm sandbox (`bwrap-session.ts`) like any run's, made the
 * same way (same mounts, uid 10001, seccomp filter, cgroup limits, no network, no
 * secret), over an empty directory of its own beside the runs' workspace directories:
 * `<workspace root>/.memql-pool-<pid>-<random>`, a name no run id can have. It holds
 * nothing of any run: no command ran in it, and its directory is empty.
 *
 * Claiming one for a run ({@link WarmPool.claim}) renames that directory onto the
 * run's workspace directory, which must be empty: `rename(2)` replaces an empty
 * directory atomically and refuses a non-empty one, so a file already there is never
 * lost, and the sandbox is then left in the pool. The sandbox's bind of the directory
 * (and its staging overlay's upper layer) follow the directory through the rename: the
 * sandbox sees the run's workspace, and the node wrote nothing into it since the
 * sandbox started, so its view is current. Only then is the sandbox bound to the run
 * (`adopt`, once), and a new one is started in the background. The caller makes sure
 * that no other sandbox of this runner serves the directory meanwhile.
 *
 * A run whose sandbox would differ from the pool's (other limits; network, which never
 * runs in a warm sandbox) is not served from the pool. A pooled sandbox does not keep
 * the node's process alive. Directories left by a node that was killed (or exited with
 * its pool full) are removed when the next pool in that directory first fills.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Logger } from '../../telemetry/index.js';
import { commandGroupName, groupCreator, processExists } from '../cgroups/index.js';
import type { BwrapSession } from './bwrap-session.js';

/** Start of every pooled directory's name. */
export const POOL_PREFIX = '.memql-pool-';

/** Options of {@link WarmPool}. */
export interface WarmPoolOptions {
  /** Sandboxes kept ready. */
  readonly size: number;
  /** Where the pool's directories are made: the parent of the runs' workspace directories. */
  readonly dir: string;
  /** The limits part of a sandbox's key (`limitsKey`): a run with other limits is not served. */
  readonly limitsKey: string;
  /** Starts one pooled sandbox over `workspaceDir` (its agent ready). */
  readonly start: (workspaceDir: string) => Promise<BwrapSession>;
  /** Owner of each pooled directory (the sandbox uid when the node runs as root). */
  readonly owner: { readonly uid: number; readonly gid: number } | null;
  readonly log: Logger;
}

/** What the pool did so far, for tests, the bench and logs. */
export interface WarmPoolStats {
  /** Sandboxes it keeps ready. */
  readonly size: number;
  /** Ready now. */
  readonly ready: number;
  /** Started since the pool was made. */
  readonly started: number;
  /** Given to runs. */
  readonly served: number;
  /** Starts that failed. */
  readonly failed: number;
}

interface Pooled {
  readonly session: BwrapSession;
  readonly dir: string;
}

const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 60_000;

/** Sandboxes made ahead of any run, each given to one run's first command. */
export class WarmPool {
  private readonly ready: Pooled[] = [];
  /**
   * Taken out of `ready` by a claim that has not yet succeeded: still the pool's, and
   * given back when the claim fails, so a refill meanwhile must not replace them.
   */
  private claiming = 0;
  private filling: Promise<void> | null = null;
  private retry: NodeJS.Timeout | null = null;
  private retryMs = 0;
  private closed = false;
  private swept: Promise<void> | null = null;
  private counts = { started: 0, served: 0, failed: 0 };
  private waiters: (() => void)[] = [];
  private readonly root: string;

  constructor(private readonly options: WarmPoolOptions) {
    this.root = resolve(options.dir);
  }

  /** Starts filling the pool in the background (idempotent); a failed start is retried later. */
  fill(): void {
    if (this.closed || this.filling !== null || this.retry !== null) return;
    if (this.ready.length + this.claiming >= this.options.size) return;
    this.filling = this.fillUp().finally(() => {
      this.filling = null;
      if (this.retry === null) this.fill();
      else this.notify();
    });
  }

  /** Resolves once the pool is full, or closed, or a start failed. */
  filled(): Promise<void> {
    if (this.closed || this.ready.length >= this.options.size) return Promise.resolve();
    return new Promise((done) => this.waiters.push(done));
  }

  /** What it did so far. */
  stats(): WarmPoolStats {
    return { size: this.options.size, ready: this.ready.length, ...this.counts };
  }

  /**
   * A pooled sandbox for `workspaceDir`'s next command, bound to the run under `key`,
   * its directory now `workspaceDir`; null (nothing changed) when the directory is not
   * one the pool can take the place of (another parent, not empty), the limits differ,
   * or no sandbox is ready.
   */
  async claim(workspaceDir: string, key: string, limitsKey: string): Promise<BwrapSession | null> {
    if (limitsKey !== this.options.limitsKey || dirname(resolve(workspaceDir)) !== this.root) {
      return null;
    }
    const pooled = this.takeReady();
    if (pooled === null) return null;
    this.claiming += 1;
    try {
      // The directory keeps the mode and owner the workspace layer gave it.
      const was = await stat(workspaceDir);
      if (!was.isDirectory()) throw new Error('not a directory');
      await chmod(pooled.dir, was.mode & 0o7777);
      if (this.options.owner !== null) await chown(pooled.dir, was.uid, was.gid);
      // Atomic, and refused (ENOTEMPTY, EEXIST) when anything is in the directory.
      await rename(pooled.dir, workspaceDir);
    } catch {
      // Back in the pool, unless it was closed meanwhile (close ended the others).
      if (this.closed) void this.discard(pooled);
      else this.ready.unshift(pooled);
      if (this.ready.length >= this.options.size) this.notify();
      return null;
    } finally {
      this.claiming -= 1;
    }
    pooled.session.adopt(workspaceDir, key);
    pooled.session.keepAlive(true);
    this.counts.served += 1;
    this.fill();
    return pooled.session;
  }

  /** Ends every pooled sandbox and removes its directory; nothing is started after. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retry !== null) clearTimeout(this.retry);
    this.retry = null;
    this.notify();
    await this.filling;
    const all = this.ready.splice(0);
    await Promise.all(all.map((p) => this.discard(p)));
  }

  /** The first ready sandbox that still lives, now the caller's; dead ones are discarded. */
  private takeReady(): Pooled | null {
    for (;;) {
      const pooled = this.ready.shift();
      if (pooled === undefined) return null;
      if (pooled.session.usable) return pooled;
      this.options.log.warn({ dir: pooled.dir }, 'warm pool: a ready sandbox was gone; replaced');
      void this.discard(pooled);
      this.fill();
    }
  }

  private async fillUp(): Promise<void> {
    this.swept ??= this.sweep();
    await this.swept;
    while (!this.closed && this.ready.length + this.claiming < this.options.size) {
      const name = `${POOL_PREFIX}${commandGroupName(process.pid, randomBytes(6).toString('hex'))}`;
      const dir = join(this.root, name);
      try {
        await mkdir(this.root, { recursive: true });
        await mkdir(dir, { mode: 0o755 });
        const owner = this.options.owner;
        if (owner !== null) await chown(dir, owner.uid, owner.gid);
        const session = await this.options.start(dir);
        this.counts.started += 1;
        this.retryMs = 0;
        if (this.closed) {
          await this.discard({ session, dir });
          return;
        }
        session.keepAlive(false);
        this.ready.push({ session, dir });
        if (this.ready.length >= this.options.size) this.notify();
      } catch (err) {
        this.counts.failed += 1;
        await rm(dir, { recursive: true, force: true }).catch(() => {});
        this.retryMs = Math.min(RETRY_MAX_MS, Math.max(RETRY_FIRST_MS, this.retryMs * 2));
        this.options.log.warn(
          { err: (err as Error).message, retryMs: this.retryMs },
          'warm pool: a sandbox could not be started; runs start their own until it can',
        );
        const timer = setTimeout(() => {
          this.retry = null;
          this.fill();
        }, this.retryMs);
        timer.unref();
        this.retry = timer;
        return;
      }
    }
  }

  /** Ends a pooled sandbox that served no run, and removes its (empty) directory. */
  private async discard(pooled: Pooled): Promise<void> {
    await pooled.session.end();
    await rm(pooled.dir, { recursive: true, force: true }).catch(() => {});
  }

  /** Removes pooled directories whose creating process is gone (a node that was killed). */
  private async sweep(): Promise<void> {
    const names = await readdir(this.root).catch(() => [] as string[]);
    for (const name of names) {
      if (!name.startsWith(POOL_PREFIX)) continue;
      const creator = groupCreator(name.slice(POOL_PREFIX.length));
      if (creator === null || creator === process.pid || processExists(creator)) continue;
      await rm(join(this.root, name), { recursive: true, force: true }).catch(() => {});
    }
  }

  private notify(): void {
    for (const done of this.waiters.splice(0)) done();
  }
}
