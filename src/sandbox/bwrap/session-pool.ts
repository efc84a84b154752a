/**
 * The warm sandboxes of one bwrap runner (see `bwrap-session.ts`): at most one idle
 * sandbox per workspace, kept under the key its last command ran with and for at most
 * `idleMs` after it (longer while background processes live in it); a sandbox is taken
 * again only by a command with the same key, for
 * the same workspace directory (the same inode: a directory made anew is another
 * workspace copy), and never by two commands at once. A sandbox made for background
 * processes is taken under any key with its limits (its view is never stale).
 *
 * @module
 */

import { stat } from 'node:fs/promises';
import type { BwrapSession } from './bwrap-session.js';

/** Options of {@link SessionPool}. */
export interface SessionPoolOptions {
  /** How long an idle sandbox is kept, ms. */
  readonly idleMs: number;
  /** Most idle sandboxes kept at once; the least recently used goes first. */
  readonly maxIdle: number;
}

interface Idle {
  readonly session: BwrapSession;
  timer: NodeJS.Timeout;
}

/** Warm sandboxes waiting for their workspace's next command, by workspace directory. */
export class SessionPool {
  /** In least-recently-used order (a Map keeps insertion order). */
  private readonly idle = new Map<string, Idle>();
  private closed = false;

  constructor(private readonly options: SessionPoolOptions) {}

  /**
   * The idle sandbox of `workspaceDir` under `key`, now the caller's (waiting for one
   * given back a moment ago to be tidy); null when there is none. One under another
   * key, or for an older copy of the directory, is ended.
   */
  async take(workspaceDir: string, key: string, limitsKey?: string): Promise<BwrapSession | null> {
    const entry = this.idle.get(workspaceDir);
    if (entry === undefined) return null;
    this.forget(workspaceDir, entry);
    const { session } = entry;
    await session.settled();
    const inode = await inodeOf(workspaceDir);
    // A sandbox made for processes sees the directory as it is: only its limits and
    // its copy (the inode) must match.
    const matches = session.forProcesses ? session.limitsKey === limitsKey : session.key === key;
    if (matches && session.inode === inode && session.state === 'idle') return session;
    void session.end();
    return null;
  }

  /**
   * Gives a sandbox back after its command: it waits for the next command of its
   * workspace (ending the one that waited before it), or ends itself if it does not
   * come back tidy.
   */
  give(session: BwrapSession): void {
    if (this.closed || this.options.idleMs <= 0) {
      void session.settled().then(() => session.end());
      return;
    }
    const before = this.idle.get(session.workspaceDir);
    if (before) {
      this.forget(session.workspaceDir, before);
      void before.session.end();
    }
    const expire = () => {
      const current = this.idle.get(session.workspaceDir);
      if (current?.session !== session) return;
      // A sandbox with background processes is not idle: it waits on.
      if (session.liveProcesses > 0) {
        current.timer = setTimeout(expire, this.options.idleMs);
        current.timer.unref();
        return;
      }
      this.forget(session.workspaceDir, current);
      void session.end();
    };
    const timer = setTimeout(expire, this.options.idleMs);
    timer.unref();
    const entry: Idle = { session, timer };
    this.idle.set(session.workspaceDir, entry);
    void session.settled().then(() => {
      if (session.state !== 'idle') this.forget(session.workspaceDir, entry);
    });
    while (this.idle.size > this.options.maxIdle) {
      const [dir, oldest] = this.idle.entries().next().value as [string, Idle];
      this.forget(dir, oldest);
      void oldest.session.end();
    }
  }

  /** Ends the waiting sandbox of `workspaceDir`, if any (its copy is going away). */
  async release(workspaceDir: string): Promise<void> {
    const entry = this.idle.get(workspaceDir);
    if (entry === undefined) return;
    this.forget(workspaceDir, entry);
    await entry.session.end();
  }

  /** Ends every idle sandbox; those still running a command end when it does. */
  async close(): Promise<void> {
    this.closed = true;
    const entries = [...this.idle.entries()];
    for (const [dir, entry] of entries) this.forget(dir, entry);
    await Promise.all(entries.map(([, entry]) => entry.session.end()));
  }

  /** How many sandboxes wait idle. */
  get size(): number {
    return this.idle.size;
  }

  private forget(workspaceDir: string, entry: Idle): void {
    clearTimeout(entry.timer);
    if (this.idle.get(workspaceDir) === entry) this.idle.delete(workspaceDir);
  }
}

async function inodeOf(dir: string): Promise<number | null> {
  return (await stat(dir).catch(() => null))?.ino ?? null;
}
