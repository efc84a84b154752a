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
 * Manifests kept (`MEMQL_WARM_MANIFESTS_MAX`): the snapshot a directory matches (its
 * files by path) is held in memory for at most `maxManifests` runs, the most recently
 * used. An older one is shed to its mark (version and committing node, no files), so a
 * node holding thousands of idle copies holds thousands of small entries, not
 * thousands of manifests; the run's next action finds the mark ({@link WarmCache.markOf})
 * and, when the head is still that version, reads the manifest back from the database
 * instead of comparing the directory in full. A snapshot in use by a command is never
 * shed.
 *
 * Per-run state: unknown (no entry) -> tracked (entry, maybe with a snapshot or its
 * mark) -> evicted (no entry, directory removed).
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
  /**
   * Most runs whose manifest snapshot is held in memory (`MEMQL_WARM_MANIFESTS_MAX`);
   * older ones keep only their mark. Default {@link DEFAULT_WARM_MANIFESTS_MAX}.
   */
  maxManifests?: number;
  /** Milliseconds now; injected so tests control time. */
  clock: () => number;
  log?: Logger;
}

/** What a shed snapshot leaves: the version the directory matches, without its files. */
export interface WarmMark {
  version: number;
  updatedByNode: string | null;
  /** The workspace generation the directory was made to match at. */
  generation: number;
}

/** Default of {@link WarmCacheOptions.maxManifests}. */
export const DEFAULT_WARM_MANIFESTS_MAX = 256;

interface Entry {
  base: BaseSnapshot | undefined;
  /** Set when `base` was shed to keep the number of snapshots within the bound. */
  mark: WarmMark | undefined;
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
  /** Entries holding a snapshot, least recently set first (a Map keeps insertion order). */
  private readonly snapshots = new Map<string, Entry>();
  private readonly maxManifests: number;
  private stamps = 0;

  constructor(private readonly options: WarmCacheOptions) {
    if (!Number.isFinite(options.idleTtlMs) || options.idleTtlMs < 0) {
      throw new RangeError(`idleTtlMs must be 0 or more, got ${options.idleTtlMs}`);
    }
    this.maxManifests = options.maxManifests ?? DEFAULT_WARM_MANIFESTS_MAX;
    if (!Number.isSafeInteger(this.maxManifests) || this.maxManifests < 1) {
      throw new RangeError(`maxManifests must be 1 or more, got ${options.maxManifests}`);
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
        mark: undefined,
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
    e.mark = undefined;
    e.generation = generation;
    e.lastUsedMs = this.options.clock();
    this.snapshots.delete(runId);
    this.snapshots.set(runId, e);
    this.shed();
  }

  /**
   * The version a directory matched when its snapshot was shed, or undefined when its
   * snapshot is held ({@link get}) or nothing is known of it.
   */
  markOf(runId: string): WarmMark | undefined {
    const e = this.entries.get(runId);
    return e?.base === undefined ? e?.mark : undefined;
  }

  /** Runs whose manifest snapshot is held in memory now (at most the bound, unless in use). */
  get heldSnapshots(): number {
    return this.snapshots.size;
  }

  /** Sheds the least recently set snapshots not in use, down to the bound. */
  private shed(): void {
    if (this.snapshots.size <= this.maxManifests) return;
    for (const [runId, e] of this.snapshots) {
      if (this.snapshots.size <= this.maxManifests) return;
      if (e.inUse > 0 || e.base === undefined) continue;
      e.mark = {
        version: e.base.version,
        updatedByNode: e.base.updatedByNode,
        generation: e.generation,
      };
      e.base = undefined;
      this.snapshots.delete(runId);
    }
  }

  /**
   * Forgets the snapshot while keeping the directory tracked: the next reconcile
   * compares it in full. For a sync whose result says `dirMatchesVersion: false`, and
   * for a workspace this node took over or lost.
   */
  invalidate(runId: string): void {
    const e = this.entry(runId);
    e.base = undefined;
    e.mark = undefined;
    this.snapshots.delete(runId);
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
    // A snapshot kept past the bound while in use goes once nothing holds it.
    if (e.inUse === 0) this.shed();
    if (this.options.idleTtlMs === 0 && e.inUse === 0) {
      await this.evict(runId);
      return true;
    }
    return false;
  }

  /** Removes the run's directory and forgets it, whether or not it is in use. */
  async evict(runId: string): Promise<void> {
    this.entries.delete(runId);
    this.snapshots.delete(runId);
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
