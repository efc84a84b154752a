/**
 * The warm cache: which run directories this node holds hydrated, the manifest
 * snapshot each was last reconciled or synced to (the base of its next sync), the
 * workspace generation it was held at, and when each was last used.
 * In memory only; after a restart every directory counts as unknown, and the first
 * reconcile of a run compares it in full.
 *
 * Idle TTL (`MEMQL_HYDRATED_IDLE_TTL_MS`): a directory unused for longer than
 * `idleTtlMs` is removed by {@link WarmCache.evictIdle}, and the next command of the
 * run hydrates it again. `0` disables reuse: {@link WarmCache.end} removes the
 * directory as soon as its last command ends, so every command starts from a fresh
 * hydrate. A directory is never evicted as idle while a command holds it
 * ({@link WarmCache.begin}); empty directories, which are not durable, survive only as
 * long as the directory stays warm.
 *
 * Per-run state: unknown (no entry) -> tracked (entry, maybe with a version) ->
 * evicted (no entry, directory removed).
 *
 * One action, as the host drives it (under the run's lock):
 *
 * ```ts
 * cache.begin(runId);
 * const known = cache.get(runId);
 * const r = await reconcileWorkspace(deps, { runId, dir, nodeId, base: known?.base });
 * cache.set(runId, r.base, generation);
 * // ... run the action ...
 * const s = await syncWorkspace(deps, { runId, dir, nodeId, generation, base: r.base });
 * if (s.base) cache.set(runId, s.base, generation);
 * else cache.invalidate(runId);
 * await cache.end(runId); // in a finally
 * ```
 *
 * When the sync throws, leave the entry as it is: the action's changes stay in the
 * directory, the base is still what the manifest holds, and the next sync commits them.
 *
 * @module
 */

import { join } from 'node:path';
import { removeTree } from '../../files/index.js';
import type { Logger } from '../../telemetry/index.js';
import type { BaseSnapshot } from './base-snapshot.js';

/** What the cache knows of one run's directory. */
export interface WarmState {
  /** The manifest snapshot the directory matches. */
  base: BaseSnapshot;
  /** The workspace generation this node held when it made the directory match. */
  generation: number;
  /** Last use, milliseconds on the cache's clock. */
  lastUsedMs: number;
}

/** Options of {@link WarmCache}. */
export interface WarmCacheOptions {
  /** `$MEMQL_WORKBENCH_ROOT`; a run's directory is `<root>/<runId>`. */
  workbenchRoot: string;
  /** Idle time after which a directory is evicted, milliseconds; 0 disables reuse. */
  idleTtlMs: number;
  /**
   * Called before a directory is removed, so whatever keeps a view of it (the
   * runner's warm sandbox) lets it go first.
   */
  onEvict?: (dir: string) => Promise<void>;
  /** Milliseconds now; injected so tests control time. */
  clock: () => number;
  log?: Logger;
}

interface Entry {
  base: BaseSnapshot | undefined;
  generation: number;
  lastUsedMs: number;
  /** Commands currently holding the directory. */
  inUse: number;
  /** Changes whenever the node itself writes into the directory (see {@link WarmCache.wrote}). */
  stamp: number;
}

/** Tracks hydrated run directories on this node and evicts idle ones. */
export class WarmCache {
  private readonly entries = new Map<string, Entry>();
  /** Removals of directories under way, by run: a use that begins meanwhile waits for them. */
  private readonly removals = new Map<string, Promise<void>>();
  private stamps = 0;

  constructor(private readonly options: WarmCacheOptions) {
    if (!Number.isFinite(options.idleTtlMs) || options.idleTtlMs < 0) {
      throw new RangeError(`idleTtlMs must be 0 or more, got ${options.idleTtlMs}`);
    }
  }

  /** The directory of a run. */
  dirOf(runId: string): string {
    return join(this.options.workbenchRoot, runId);
  }

  private entry(runId: string): Entry {
    let e = this.entries.get(runId);
    if (e === undefined) {
      e = {
        base: undefined,
        generation: 0,
        lastUsedMs: this.options.clock(),
        inUse: 0,
        stamp: ++this.stamps,
      };
      this.entries.set(runId, e);
    }
    return e;
  }

  /** Marks the run's directory as used now (and tracked, so it is evicted in time). */
  touch(runId: string): void {
    this.entry(runId).lastUsedMs = this.options.clock();
  }

  /** What the directory is known to match, or undefined when unknown. */
  get(runId: string): WarmState | undefined {
    const e = this.entries.get(runId);
    if (e?.base === undefined) return undefined;
    return { base: e.base, generation: e.generation, lastUsedMs: e.lastUsedMs };
  }

  /**
   * Records that the directory matches `base`, made while this node held the
   * workspace at `generation` (after a reconcile, or a sync whose result carries a
   * base), and touches it.
   */
  set(runId: string, base: BaseSnapshot, generation: number): void {
    const e = this.entry(runId);
    e.base = base;
    e.generation = generation;
    e.lastUsedMs = this.options.clock();
  }

  /**
   * Forgets the snapshot while keeping the directory tracked: the next reconcile
   * compares it in full. For a sync whose result says `dirMatchesVersion: false`, and
   * for a workspace this node took over or lost.
   */
  invalidate(runId: string): void {
    const e = this.entry(runId);
    e.base = undefined;
    e.stamp = ++this.stamps;
  }

  /**
   * Records that the node wrote into the run's directory itself (a file action, a
   * reconcile, a reset): what a command's sandbox saw of it may be stale, so the
   * directory's {@link WarmCache.stampOf} changes. Commands' own writes go through
   * their sandbox and change nothing here.
   */
  wrote(runId: string): void {
    this.entry(runId).stamp = ++this.stamps;
  }

  /**
   * Names the directory's contents as far as the node's own writes go: equal stamps
   * mean the node wrote nothing into it in between. A command's `reuse` key.
   */
  stampOf(runId: string): string {
    return `copy-${this.entry(runId).stamp}`;
  }

  /** A command starts using the directory: it is not evicted as idle until {@link end}. */
  begin(runId: string): void {
    const e = this.entry(runId);
    e.inUse += 1;
    e.lastUsedMs = this.options.clock();
  }

  /**
   * A command is done with the directory. With an idle TTL of 0 the directory is
   * evicted once no command holds it; returns whether it was.
   */
  async end(runId: string): Promise<boolean> {
    const e = this.entries.get(runId);
    if (e === undefined) return false;
    e.inUse = Math.max(0, e.inUse - 1);
    e.lastUsedMs = this.options.clock();
    if (this.options.idleTtlMs === 0 && e.inUse === 0) {
      await this.evict(runId);
      return true;
    }
    return false;
  }

  /** Removes the run's directory and forgets it, whether or not it is in use. */
  async evict(runId: string): Promise<void> {
    this.entries.delete(runId);
    const earlier = this.removals.get(runId);
    const removal = (async () => {
      await earlier;
      await this.options.onEvict?.(this.dirOf(runId)).catch(() => {});
      // Never follows a link inside the tree, and reaches trees deeper than PATH_MAX.
      await removeTree(this.dirOf(runId));
      this.options.log?.info({ runId }, 'warm workspace directory evicted');
    })();
    const settled = removal.catch(() => undefined);
    this.removals.set(runId, settled);
    try {
      await removal;
    } finally {
      if (this.removals.get(runId) === settled) this.removals.delete(runId);
    }
  }

  /**
   * Resolves once no removal of the run's directory is under way. A use that began
   * while an eviction was removing the directory waits here before it looks at the
   * directory, so it never finds a tree that is about to vanish and makes a new one.
   */
  async settled(runId: string): Promise<void> {
    await this.removals.get(runId);
  }

  /**
   * Evicts every directory idle for longer than the TTL (any idle one when the TTL is
   * 0) and not held by a command. Returns the run ids evicted.
   */
  async evictIdle(now: number = this.options.clock()): Promise<string[]> {
    const ttl = this.options.idleTtlMs;
    const idle = (e: Entry | undefined): boolean =>
      e !== undefined && e.inUse === 0 && (ttl === 0 || now - e.lastUsedMs > ttl);
    const evicted: string[] = [];
    for (const runId of [...this.entries.keys()]) {
      // Checked again here: a command may have begun while an earlier removal ran.
      if (!idle(this.entries.get(runId))) continue;
      await this.evict(runId);
      evicted.push(runId);
    }
    return evicted;
  }

  /** Run ids tracked now, for the sweeper (directories it must not treat as orphans). */
  tracked(): string[] {
    return [...this.entries.keys()];
  }
}
