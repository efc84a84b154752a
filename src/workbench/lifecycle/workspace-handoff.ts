/**
 * The handoff side of a drain: while a node drains, each workspace it holds is
 * released (`handed_off`) as soon as no command or action of this node uses it, so
 * the replicas waiting for it can take it on with every change already committed.
 *
 * @module
 */

import { WakeUps, within } from '../../queue/index.js';
import { type Db, listLiveWorkspacesForNode } from '../../store/index.js';
import type { Logger } from '../../telemetry/index.js';

/** How often a draining node looks for workspaces it can hand off, ms. */
const HANDOFF_POLL_MS = 100;

/** How long a stopping node waits for the actions in flight on a run to hand it off, ms. */
const FINAL_HANDOFF_WAIT_MS = 5_000;

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
  private readonly wakeUps = new WakeUps();

  constructor(private readonly deps: WorkspaceHandoffDeps) {}

  /** Starts handing off; idempotent. */
  start(): void {
    this.loop ??= this.run();
  }

  /**
   * Stops the loop, then hands off every workspace still held, busy or not: the node's
   * commands have ended by now, and a handoff waits its turn behind the actions in
   * flight on the run (each gets {@link FINAL_HANDOFF_WAIT_MS}). Failures are logged:
   * such a workspace falls to a takeover once this node is gone.
   */
  async finish(): Promise<void> {
    this.stopped = true;
    this.wakeUps.wake();
    await this.loop;
    await this.pass(true).catch((err: unknown) =>
      this.deps.log.warn(
        { err: (err as Error).message },
        'handoff at stop failed: the workspaces fall to takeover once this node is gone',
      ),
    );
  }

  /** Hands off every held workspace that is idle (or every one, `all`). */
  private async pass(all = false): Promise<void> {
    const held = await listLiveWorkspacesForNode(this.deps.db, this.deps.nodeId);
    for (const ws of held) {
      if (!all) {
        if (this.deps.idle(ws.runId)) await this.deps.handOff(ws.runId);
      } else if (!(await within(this.deps.handOff(ws.runId), FINAL_HANDOFF_WAIT_MS))) {
        this.deps.log.warn(
          { runId: ws.runId },
          'workspace still busy at stop: it falls to a takeover once this node is gone',
        );
      }
    }
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.wakeUps.clear();
      try {
        await this.pass();
      } catch (err) {
        this.deps.log.warn({ err: (err as Error).message }, 'handoff pass failed; retrying');
      }
      if (!this.stopped) await this.wakeUps.idle(HANDOFF_POLL_MS);
    }
  }
}
