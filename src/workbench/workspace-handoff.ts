/**
 * The handoff side of a drain: while a node drains, each workspace it holds is
 * released (`handed_off`) as soon as no command or action of this node uses it, so
 * the replicas waiting for it can take it on with every change already committed.
 *
 * @module
 */

import { type Db, listLiveWorkspacesForNode } from '../store/index.js';
import type { Logger } from '../telemetry/logger.js';

/** How often a draining node looks for workspaces it can hand off, ms. */
const HANDOFF_POLL_MS = 100;

/** What {@link WorkspaceHandoff} needs. */
export interface WorkspaceHandoffDeps {
  db: Db;
  nodeId: string;
  /** True while nothing of this node uses the run's workspace. */
  idle(runId: string): boolean;
  /** Releases the run's workspace if this node holds it (under the run's lock). */
  handOff(runId: string): Promise<boolean>;
  log: Logger;
}

/** Hands a draining node's workspaces off as they go idle. */
export class WorkspaceHandoff {
  private loop: Promise<void> | null = null;
  private stopped = false;
  private wake: (() => void) | null = null;

  constructor(private readonly deps: WorkspaceHandoffDeps) {}

  /** Starts handing off; idempotent. */
  start(): void {
    this.loop ??= this.run();
  }

  /**
   * Stops the loop, then hands off every held workspace once more whatever its state
   * (the node's commands have ended by now). Failures are logged: the workspaces then
   * fall to a takeover once this node is gone.
   */
  async finish(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    await this.pass().catch((err: unknown) =>
      this.deps.log.warn(
        { err: (err as Error).message },
        'handoff at stop failed: the workspaces fall to takeover once this node is gone',
      ),
    );
  }

  /** Hands off every held workspace that is idle; returns how many are left. */
  private async pass(): Promise<number> {
    const held = await listLiveWorkspacesForNode(this.deps.db, this.deps.nodeId);
    let left = 0;
    for (const ws of held) {
      if (!this.deps.idle(ws.runId)) left += 1;
      else await this.deps.handOff(ws.runId);
    }
    return left;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.pass();
      } catch (err) {
        this.deps.log.warn({ err: (err as Error).message }, 'handoff pass failed; retrying');
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.wake = null;
          resolve();
        };
        const timer = setTimeout(done, HANDOFF_POLL_MS);
        timer.unref();
        this.wake = done;
      });
    }
  }
}
