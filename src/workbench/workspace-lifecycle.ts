import { chown, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  adoptUnownedWorkspace,
  type Db,
  getLiveWorkspace,
  insertAuditEvent,
  provisionWorkspace,
  releaseLiveWorkspace,
  StoreError,
  type Workspace,
} from '../store/index.js';
import type { Logger } from '../telemetry/logger.js';

/**
 * What to do with a run's live workspace row when a call for the run reaches this
 * node:
 * - `create`: there is none; insert this node's row.
 * - `adopt`: it names this node, or no node at all; use it (stamping this node).
 * - `takeover`: it names another node, which is lost to this call; release that row
 *   as `node_lost` and insert this node's successor row.
 */
export type ProvisionDecision =
  | { kind: 'create' }
  | { kind: 'adopt'; workspace: Workspace }
  | { kind: 'takeover'; previous: Workspace };

/** Decides how this node comes to hold the run's workspace. Pure. */
export function decideProvision(live: Workspace | null, nodeId: string): ProvisionDecision {
  if (live === null) return { kind: 'create' };
  if (live.nodeId === null || live.nodeId === nodeId) return { kind: 'adopt', workspace: live };
  return { kind: 'takeover', previous: live };
}

/** The outcome of {@link ensureWorkspace}. */
export interface EnsuredWorkspace {
  workspace: Workspace;
  decision: ProvisionDecision['kind'];
  /** The released row of the lost node, on a takeover. */
  previous: Workspace | null;
  /** Host path of the workspace directory. */
  dir: string;
}

/** What {@link ensureWorkspace} needs. */
export interface EnsureWorkspaceDeps {
  db: Db;
  nodeId: string;
  /** `$MEMQL_WORKBENCH_ROOT`. */
  workbenchRoot: string;
  /** Owner of the directory, so sandboxed commands (uid 10001) can write in it. */
  dirOwner?: { uid: number; gid: number };
  log: Logger;
}

async function applyDecision(
  deps: EnsureWorkspaceDeps,
  run: { id: string; ownerUserId: string },
): Promise<{ workspace: Workspace; decision: ProvisionDecision }> {
  return deps.db.transaction(async (tx) => {
    // One decision per run at a time, across nodes: a racer waits, then sees the row
    // the first one committed and adopts it instead of deciding "create" as well.
    await tx.query('select pg_advisory_xact_lock(hashtext($1))', [`memql:workspace:${run.id}`]);
    const live = await getLiveWorkspace(tx, run.id);
    const decision = decideProvision(live, deps.nodeId);
    const mine = { runId: run.id, nodeId: deps.nodeId, ownerUserId: run.ownerUserId };
    switch (decision.kind) {
      case 'adopt': {
        const ws =
          decision.workspace.nodeId === null
            ? await adoptUnownedWorkspace(tx, decision.workspace.id, deps.nodeId)
            : decision.workspace;
        if (ws === null) throw new StoreError('conflict', 'workspace claimed concurrently');
        return { workspace: ws, decision };
      }
      case 'create': {
        const ws = await provisionWorkspace(tx, mine);
        await insertAuditEvent(tx, {
          eventType: 'workspace.provisioned',
          runId: run.id,
          workspaceId: ws.id,
          ownerUserId: run.ownerUserId,
          metadata: { nodeId: deps.nodeId },
        });
        return { workspace: ws, decision };
      }
      case 'takeover': {
        await releaseLiveWorkspace(tx, run.id, 'node_lost');
        const ws = await provisionWorkspace(tx, mine);
        await insertAuditEvent(tx, {
          eventType: 'workspace.taken_over',
          runId: run.id,
          workspaceId: ws.id,
          ownerUserId: run.ownerUserId,
          metadata: {
            nodeId: deps.nodeId,
            previousNodeId: decision.previous.nodeId,
            previousWorkspaceId: decision.previous.id,
          },
        });
        return { workspace: ws, decision };
      }
    }
  });
}

/**
 * Provisions or adopts the run's workspace row for this node and makes sure its
 * directory exists. Decisions for one run are serialized by a transaction-scoped
 * advisory lock; the one-live-row index is the backstop (a conflict is retried).
 */
export async function ensureWorkspace(
  deps: EnsureWorkspaceDeps,
  run: { id: string; ownerUserId: string },
): Promise<EnsuredWorkspace> {
  let result: { workspace: Workspace; decision: ProvisionDecision } | undefined;
  for (let attempt = 0; result === undefined; attempt++) {
    try {
      result = await applyDecision(deps, run);
    } catch (err) {
      if (!(err instanceof StoreError && err.code === 'conflict') || attempt >= 2) throw err;
    }
  }
  const { workspace, decision } = result;
  if (decision.kind === 'takeover') {
    deps.log.warn(
      {
        runId: run.id,
        workspaceId: workspace.id,
        previousNodeId: decision.previous.nodeId,
        nodeId: deps.nodeId,
      },
      'workspace taken over from a lost node',
    );
  }
  const dir = join(deps.workbenchRoot, run.id);
  await mkdir(deps.workbenchRoot, { recursive: true });
  await mkdir(dir, { recursive: true, mode: 0o755 });
  if (deps.dirOwner) await chown(dir, deps.dirOwner.uid, deps.dirOwner.gid);
  return {
    workspace,
    decision: decision.kind,
    previous: decision.kind === 'takeover' ? decision.previous : null,
    dir,
  };
}
