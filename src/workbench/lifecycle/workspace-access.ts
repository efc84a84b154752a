/**
 * How every action reaches a run's directory on this node: under the run's lock, as
 * the workspace's holder, reconciled with the manifest first and (for a mutating
 * action) synced back after.
 *
 * Holding: the live workspace row names the holder node and its generation (the
 * fencing token). Before an action this node reads the manifest head and the holder
 * in one query (a routed call reads the run with them, {@link WorkspaceAccess.look});
 * when it is not the holder it provisions, adopts or takes the workspace over first
 * (`workspace-lifecycle.ts`). Its copy's base snapshot is kept per generation, so a
 * copy made under an older generation is always reconciled in full. Syncs commit as
 * a fenced three-way merge, so a node that lost the workspace meanwhile can add its
 * changes but never delete or overwrite the new holder's.
 *
 * What nothing changed costs: a call on a workspace this node holds, whose copy is
 * current, reads one statement and writes nothing before its action, and its sync
 * writes nothing when the action changed nothing.
 *
 * @module
 */

import type { Stats } from 'node:fs';
import { chown, mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { NODE_DRAINING, WorkbenchError } from '../../contract/index.js';
import {
  type Db,
  type GoneEvidence,
  getLiveWorkspace,
  getRunWorkspace,
  getWorkspaceHead,
  insertAuditEvent,
  type Run,
  type RunWorkspace,
  releaseHeldWorkspace,
  type VersionOrigin,
  type Workspace,
  type WorkspaceHead,
} from '../../store/index.js';
import type { Logger } from '../../telemetry/index.js';
import {
  type BaseSnapshot,
  reconcileWorkspace,
  type SyncResult,
  syncWorkspace,
  type WarmCache,
  type WorkspaceSyncDeps,
} from '../sync/index.js';
import { requireLiveRun } from './run-lifecycle.js';
import type { RunLocks } from './run-locks.js';
import {
  type EnsuredWorkspace,
  ensureWorkspace,
  type ProvisionPurpose,
} from './workspace-lifecycle.js';

/** What {@link WorkspaceAccess} is built from. */
export interface WorkspaceAccessDeps {
  db: Db;
  nodeId: string;
  workbenchRoot: string;
  fileOwner?: { uid: number; gid: number };
  /** How long a worker's heartbeat counts it live, ms. */
  livenessMs: number;
  /** When an old heartbeat proves a holder gone (the queue's recovery rule); default: at its word. */
  goneEvidence?: GoneEvidence;
  /** How long a call waits for a draining holder's handoff, ms. */
  handoffWaitMs: number;
  sync: WorkspaceSyncDeps;
  warm: WarmCache;
  locks: RunLocks;
  /** True once this node drains: it then takes no workspace it does not hold. */
  draining(): boolean;
  log: Logger;
}

/** A run's directory while an action holds it. */
export interface HeldCopy {
  runId: string;
  dir: string;
  /** The generation this node holds the workspace at. */
  generation: number;
  /** What the directory matched before the action: the base of its sync. */
  base: BaseSnapshot;
  /**
   * The copy as far as this node's own writes go (`WarmCache.stampOf`): the key a
   * command's warm sandbox is reused under, so one that saw the directory before the
   * node last wrote into it is never used again.
   */
  stamp: string;
}

/** A live run with its live workspace row and manifest head, as one statement read them. */
export interface RunLook extends RunWorkspace {
  run: Run;
}

/** The refusal of a node that drains and so takes on no workspace; nothing of the call ran. */
export function nodeStoppingRefusal(nodeId: string): WorkbenchError {
  return new WorkbenchError(
    'unavailable',
    `unavailable: node "${nodeId}" is shutting down and takes no new calls; retry, and another replica will be picked`,
    { reason: NODE_DRAINING, nodeId },
  );
}

/** Reaches run directories as their holder. */
export class WorkspaceAccess {
  constructor(private readonly deps: WorkspaceAccessDeps) {}

  /** The run's directory on this node. */
  dirOf(runId: string): string {
    return join(this.deps.workbenchRoot, runId);
  }

  /**
   * A directory removed behind the cache's back (by hand, by a run's end) no longer
   * matches what the cache knew of it: forget that, so the next reconcile is in full.
   */
  async forgetIfGone(runId: string): Promise<void> {
    if (!(await exists(this.dirOf(runId)))) this.deps.warm.invalidate(runId);
  }

  /**
   * Reads the run, its live workspace row and its manifest head in one statement, and
   * refuses a run that does not resolve (`workspace_owner_unresolved`) or has ended
   * (`run_ended`) before anything is written.
   */
  async look(runId: string): Promise<RunLook> {
    const state = await getRunWorkspace(this.deps.db, runId);
    return { ...state, run: requireLiveRun(runId, state.run) };
  }

  /**
   * Provisions, adopts or takes over the run's workspace for this node. `live`, when
   * the caller has just read the run's live row ({@link look}), and it names this node,
   * is the answer as it stands: this node holds the workspace, and nothing is written.
   * Otherwise a directory removed behind the cache's back is noticed first, since this
   * makes it again.
   */
  async ensure(
    run: Run,
    purpose: ProvisionPurpose,
    live?: Workspace | null,
  ): Promise<EnsuredWorkspace> {
    if (this.deps.draining()) throw nodeStoppingRefusal(this.deps.nodeId);
    if (live?.nodeId === this.deps.nodeId) {
      // The directory is made (and a removed one noticed) by the action's reconcile.
      return { workspace: live, decision: 'adopt', previous: null, dir: this.dirOf(run.id) };
    }
    await this.forgetIfGone(run.id);
    return ensureWorkspace(
      {
        db: this.deps.db,
        nodeId: this.deps.nodeId,
        workbenchRoot: this.deps.workbenchRoot,
        livenessMs: this.deps.livenessMs,
        ...(this.deps.goneEvidence ? { goneEvidence: this.deps.goneEvidence } : {}),
        handoffWaitMs: this.deps.handoffWaitMs,
        log: this.deps.log,
        ...(this.deps.fileOwner ? { dirOwner: this.deps.fileOwner } : {}),
      },
      run,
      purpose,
    );
  }

  /**
   * Runs `work` on the run's directory, held and made current, under the run's lock.
   * With `mutating`, what the work changed is synced after it succeeds; a sync failure
   * is the caller's error and leaves the previous durable state. `resolveRun` is read
   * only when this node must take the workspace on. A workspace another live node
   * took meanwhile is not taken back (`unavailable`, `workspace_moved`, nothing done):
   * only a gone holder's is.
   */
  use<T>(
    runId: string,
    opts: {
      mutating: boolean;
      resolveRun: () => Promise<Run>;
      origin?: VersionOrigin;
      /** The head as a statement just read it (a command's claim); else it is read here. */
      seen?: WorkspaceHead;
    },
    work: (held: HeldCopy) => Promise<T>,
  ): Promise<T> {
    return this.operate(
      runId,
      opts.mutating ? (opts.origin ?? { source: 'action' }) : null,
      async () => {
        const held = await this.prepare(runId, opts.resolveRun, opts.seen);
        return { held, run: undefined };
      },
      work,
    );
  }

  /**
   * Runs a routed call's `work` on the run's directory, as {@link use} does, with the
   * run read under the run's lock: one statement gives the run (refused when it does
   * not resolve or has ended), the holder and the manifest head; the workspace is then
   * held as for a routed call (`ensure(run, 'call')`), and when this node held it
   * already, that statement is the only one before the action.
   */
  call<T>(
    runId: string,
    mutating: VersionOrigin | false,
    work: (held: HeldCopy, run: Run) => Promise<T>,
  ): Promise<T> {
    return this.operate(
      runId,
      mutating === false ? null : mutating,
      async () => {
        const look = await this.look(runId);
        const ensured = await this.ensure(look.run, 'call', look.live);
        // Held already (nothing was written): what the statement read is the head and
        // the holder as they stand under this lock.
        const seen = ensured.workspace === look.live ? headOf(look) : undefined;
        const held = await this.prepare(runId, async () => look.run, seen);
        return { held, run: look.run };
      },
      (held, run) => work(held, run!),
    );
  }

  /**
   * Holds the run, runs `work` and, for a mutating action (`origin` not null), syncs what
   * it changed as a version made by `origin`; an object answer then names the version
   * the workspace is at (`version`).
   */
  private operate<T>(
    runId: string,
    origin: VersionOrigin | null,
    hold: () => Promise<{ held: HeldCopy; run: Run | undefined }>,
    work: (held: HeldCopy, run: Run | undefined) => Promise<T>,
  ): Promise<T> {
    return this.deps.locks.run(runId, async () => {
      this.deps.warm.begin(runId);
      try {
        const { held, run } = await hold();
        try {
          const result = await work(held, run);
          if (origin === null) return result;
          const { version } = await this.sync(held, origin);
          return isRecord(result) ? ({ ...result, version } as T) : result;
        } finally {
          // A file action wrote into the copy outside any sandbox.
          if (origin !== null) this.deps.warm.wrote(runId);
        }
      } finally {
        await this.deps.warm.end(runId);
      }
    });
  }

  /**
   * Records that the node wrote into a held copy outside any sandbox (a restore), so a
   * warm sandbox that saw the copy before is not used again; call under the run's lock.
   */
  wrote(runId: string): void {
    this.deps.warm.wrote(runId);
  }

  /** Keeps `base` as what a held copy matches now (after a restore's own commit). */
  rebase(held: HeldCopy, base: BaseSnapshot): void {
    this.deps.warm.set(held.runId, base, held.generation);
  }

  /**
   * Commits what changed in a held copy, as a version made by `origin` (an action by
   * default); call under the run's lock. A copy over its quota commits nothing and is
   * put back to its base, so the disk is freed at once.
   */
  async sync(held: HeldCopy, origin?: VersionOrigin): Promise<SyncResult> {
    let synced: SyncResult;
    try {
      synced = await syncWorkspace(this.deps.sync, {
        runId: held.runId,
        dir: held.dir,
        nodeId: this.deps.nodeId,
        generation: held.generation,
        base: held.base,
        ...(origin ? { origin } : {}),
      });
    } catch (err) {
      if (err instanceof WorkbenchError && err.code === 'workspace_quota_exceeded') {
        await this.reset(held);
      }
      throw err;
    }
    if (synced.base) this.deps.warm.set(held.runId, synced.base, held.generation);
    else this.deps.warm.invalidate(held.runId);
    return synced;
  }

  /**
   * Puts a held copy back to what the manifest holds (removing what an action added,
   * restoring what it changed), under the run's lock. A failure leaves the copy
   * unknown, so the next action reconciles it in full.
   */
  async reset(held: HeldCopy): Promise<void> {
    this.deps.warm.invalidate(held.runId);
    try {
      const r = await reconcileWorkspace(this.deps.sync, {
        runId: held.runId,
        dir: held.dir,
        nodeId: this.deps.nodeId,
        base: undefined,
      });
      this.deps.warm.set(held.runId, r.base, held.generation);
    } catch (err) {
      this.deps.log.warn(
        { runId: held.runId, err: (err as Error).message },
        'could not put the workspace copy back after a refused change; the next action reconciles it',
      );
    }
  }

  /**
   * Holds the run's workspace and reconciles its copy: the head and holder as `seen`
   * (read under this lock) or read now; a directory that is there as the last action
   * left it is not made again.
   */
  private async prepare(
    runId: string,
    resolveRun: () => Promise<Run>,
    seen?: WorkspaceHead,
  ): Promise<HeldCopy> {
    const dir = this.dirOf(runId);
    // An idle eviction that began before this use may still be removing the directory.
    await this.deps.warm.settled(runId);
    const found = await stat(dir).catch(() => null);
    // Removed behind the cache's back: what the cache knew of it no longer holds.
    if (found === null) this.deps.warm.invalidate(runId);
    let head: WorkspaceHead | undefined = seen ?? (await getWorkspaceHead(this.deps.db, runId));
    let generation: number;
    if (head.holder !== null && head.holder.nodeId === this.deps.nodeId) {
      generation = head.holder.generation;
    } else {
      // This node held it, or had a command for it: never take it from a live node.
      const ensured = await this.ensure(await resolveRun(), 'claim');
      generation = ensured.workspace.generation;
      head = undefined;
    }
    if (!this.isReady(found)) {
      await mkdir(dir, { recursive: true });
      if (this.deps.fileOwner) await chown(dir, this.deps.fileOwner.uid, this.deps.fileOwner.gid);
    }
    const known = this.deps.warm.get(runId);
    // A snapshot the cache shed: its version, for the manifest to be read back.
    const mark = this.deps.warm.markOf(runId);
    const reconciled = await reconcileWorkspace(this.deps.sync, {
      runId,
      dir,
      nodeId: this.deps.nodeId,
      base: known?.generation === generation ? known.base : undefined,
      ...(mark?.generation === generation ? { mark } : {}),
      ...(head ? { head } : {}),
    });
    this.deps.warm.set(runId, reconciled.base, generation);
    // A reconcile in full may have written the copy (and one that found it current did not).
    if (reconciled.mode !== 'current') this.deps.warm.wrote(runId);
    return {
      runId,
      dir,
      generation,
      base: reconciled.base,
      stamp: this.deps.warm.stampOf(runId),
    };
  }

  /** Whether a run directory found by `stat` is a directory with the owner files get. */
  private isReady(found: Stats | null): boolean {
    if (found === null || !found.isDirectory()) return false;
    const owner = this.deps.fileOwner;
    return owner === undefined || (found.uid === owner.uid && found.gid === owner.gid);
  }

  /**
   * Releases the run's workspace as `handed_off` if this node holds it, under the
   * run's lock (so no action of this node is between its reconcile and its sync), and
   * forgets what its copy matched: the next holder reconciles from the manifest, which
   * holds every acknowledged change. Returns whether it was released.
   */
  handOff(runId: string): Promise<boolean> {
    return this.deps.locks.run(runId, async () => {
      const live = await getLiveWorkspace(this.deps.db, runId);
      if (live === null || live.nodeId !== this.deps.nodeId) return false;
      const released = await this.deps.db.transaction(async (tx) => {
        const r = await releaseHeldWorkspace(
          tx,
          { id: live.id, nodeId: this.deps.nodeId, generation: live.generation },
          'handed_off',
        );
        if (r) {
          await insertAuditEvent(tx, {
            eventType: 'workspace.handed_off',
            runId,
            workspaceId: r.id,
            ownerUserId: r.ownerUserId,
            metadata: { nodeId: this.deps.nodeId, generation: r.generation },
          });
        }
        return r;
      });
      if (released === null) return false;
      // The copy stays (the sweep or the idle TTL removes it); should this node hold the
      // workspace again, a later generation reconciles it in full.
      this.deps.warm.invalidate(runId);
      this.deps.log.info(
        { runId, workspaceId: released.id, generation: released.generation },
        'workspace handed off: this node drains',
      );
      return true;
    });
  }
}

/** The head and holder as {@link getWorkspaceHead} gives them, from what {@link WorkspaceAccess.look} read. */
function headOf(look: RunLook): WorkspaceHead {
  return {
    ...look.head,
    holder: look.live ? { nodeId: look.live.nodeId, generation: look.live.generation } : null,
  };
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Whether an answer is a plain object, to which a version can be added. */
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
