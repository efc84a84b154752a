import { chown, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { WORKSPACE_MOVED, WorkbenchError } from '../../contract/index.js';
import {
  adoptUnownedWorkspace,
  type Db,
  type GoneEvidence,
  getLiveWorkspace,
  insertAuditEvent,
  loseProcesses,
  type NodeLiveness,
  nodeLiveness,
  provisionWorkspace,
  releaseLiveWorkspace,
  StoreError,
  type Workspace,
} from '../../store/index.js';
import type { Logger } from '../../telemetry/index.js';

/**
 * What to do with a run's live workspace row when a call or a claimed command for the
 * run reaches this node:
 * - `create`: there is none; insert this node's row (a successor of any released one).
 * - `adopt`: it names this node, or no node at all; use it (stamping this node).
 * - `takeover`: it names another node that is lost to this call: gone (no live
 *   worker), or serving but unreachable from the agent that routed the call here.
 *   Release that row as `node_lost` and insert this node's successor at the next
 *   generation; the old holder's late commits are fenced.
 * - `wait`: it names a node that is draining; that node hands the workspace off once
 *   its commands on the run end, so wait for the release instead of taking over.
 * - `refuse`: a claimed command, or an action whose workspace moved after the call
 *   reached this node, found it held by another live node; nothing runs here.
 */
export type ProvisionDecision =
  | { kind: 'create' }
  | { kind: 'adopt'; workspace: Workspace }
  | { kind: 'takeover'; previous: Workspace; holder: 'gone' | 'unreachable' }
  | { kind: 'wait'; holder: Workspace }
  | { kind: 'refuse'; holder: Workspace };

/**
 * Why this node wants the workspace: a routed `call` (the agent chose this node, so a
 * serving holder it passed over is unreachable to it), or a `claim`: a command the
 * queue handed this node, or an action that finds the workspace moved since its call
 * arrived. A claim never takes a workspace from a live node.
 */
export type ProvisionPurpose = 'call' | 'claim';

/** Decides how this node comes to hold the run's workspace. Pure. */
export function decideProvision(
  live: Workspace | null,
  nodeId: string,
  holder: NodeLiveness = 'gone',
  purpose: ProvisionPurpose = 'call',
): ProvisionDecision {
  if (live === null) return { kind: 'create' };
  if (live.nodeId === null || live.nodeId === nodeId) return { kind: 'adopt', workspace: live };
  if (holder === 'gone') return { kind: 'takeover', previous: live, holder: 'gone' };
  if (purpose === 'claim') return { kind: 'refuse', holder: live };
  if (holder === 'draining') return { kind: 'wait', holder: live };
  return { kind: 'takeover', previous: live, holder: 'unreachable' };
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
  /** How long a worker's heartbeat counts it live, ms (`MEMQL_NODE_LIVENESS_MS`). */
  livenessMs: number;
  /**
   * When an old heartbeat proves the holder gone: only once the database has been
   * steady (see `store/db-continuity.ts`), so an outage everyone lived through moves no
   * workspace. Default: an old heartbeat is taken at its word.
   */
  goneEvidence?: GoneEvidence;
  /** How long a call waits for a draining holder to hand the workspace off, ms. */
  handoffWaitMs: number;
  /** How often the wait looks again, ms. */
  handoffPollMs?: number;
  log: Logger;
}

async function applyDecision(
  deps: EnsureWorkspaceDeps,
  run: { id: string; ownerUserId: string },
  purpose: ProvisionPurpose,
): Promise<{ workspace: Workspace | null; decision: ProvisionDecision }> {
  return deps.db.transaction(async (tx) => {
    // One decision per run at a time, across nodes: a racer waits, then sees the row
    // the first one committed and adopts it instead of deciding "create" as well.
    await tx.query('select pg_advisory_xact_lock(hashtext($1))', [`memql:workspace:${run.id}`]);
    const live = await getLiveWorkspace(tx, run.id);
    const holder =
      live?.nodeId && live.nodeId !== deps.nodeId
        ? await nodeLiveness(tx, live.nodeId, deps.livenessMs, deps.goneEvidence)
        : 'gone';
    const decision = decideProvision(live, deps.nodeId, holder, purpose);
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
        // Processes are not migrated: what the lost holder ran of this run ends with it.
        if (decision.previous.nodeId !== null) {
          await loseProcesses(tx, decision.previous.nodeId, run.id);
        }
        const ws = await provisionWorkspace(tx, mine);
        await insertAuditEvent(tx, {
          eventType: 'workspace.taken_over',
          runId: run.id,
          workspaceId: ws.id,
          ownerUserId: run.ownerUserId,
          metadata: {
            nodeId: deps.nodeId,
            generation: ws.generation,
            previousNodeId: decision.previous.nodeId,
            previousWorkspaceId: decision.previous.id,
            previousGeneration: decision.previous.generation,
            previousHolder: decision.holder,
          },
        });
        return { workspace: ws, decision };
      }
      case 'wait':
      case 'refuse':
        return { workspace: null, decision };
    }
  });
}

function handoffTimeout(runId: string, holder: Workspace, waitedMs: number): WorkbenchError {
  return new WorkbenchError(
    'unavailable',
    `unavailable: the workspace of run "${runId}" is being handed off by draining node "${holder.nodeId}" (waited ${waitedMs} ms); retry shortly and the new holder will serve it`,
    { runId, reason: 'workspace_handoff', holderNodeId: holder.nodeId },
  );
}

function movedError(runId: string, holder: Workspace): WorkbenchError {
  return new WorkbenchError(
    'unavailable',
    `unavailable: the workspace of run "${runId}" moved to node "${holder.nodeId}" before this could start on this node; nothing was done. Retry, and it goes to that node`,
    { runId, reason: WORKSPACE_MOVED, holderNodeId: holder.nodeId },
  );
}

/**
 * Provisions or adopts the run's workspace row for this node and makes sure its
 * directory exists. Decisions for one run are serialized by a transaction-scoped
 * advisory lock; the one-live-row index is the backstop (a conflict is retried). A
 * draining holder is waited for (up to `handoffWaitMs`), never taken over; a claimed
 * command never takes a workspace from a live node (`unavailable`, `workspace_moved`).
 */
export async function ensureWorkspace(
  deps: EnsureWorkspaceDeps,
  run: { id: string; ownerUserId: string },
  purpose: ProvisionPurpose = 'call',
): Promise<EnsuredWorkspace> {
  const began = performance.now();
  let result: { workspace: Workspace; decision: ProvisionDecision } | undefined;
  let conflicts = 0;
  let waitLogged = false;
  while (result === undefined) {
    let attempt: { workspace: Workspace | null; decision: ProvisionDecision };
    try {
      attempt = await applyDecision(deps, run, purpose);
    } catch (err) {
      if (!(err instanceof StoreError && err.code === 'conflict') || ++conflicts > 2) throw err;
      continue;
    }
    const { decision } = attempt;
    if (decision.kind === 'refuse') throw movedError(run.id, decision.holder);
    if (decision.kind === 'wait') {
      const waited = Math.round(performance.now() - began);
      if (waited >= deps.handoffWaitMs) throw handoffTimeout(run.id, decision.holder, waited);
      if (!waitLogged) {
        waitLogged = true;
        deps.log.info(
          { runId: run.id, holderNodeId: decision.holder.nodeId, nodeId: deps.nodeId },
          'workspace held by a draining node: waiting for its handoff',
        );
      }
      await delay(Math.min(deps.handoffPollMs ?? 100, deps.handoffWaitMs - waited));
      continue;
    }
    result = { workspace: attempt.workspace!, decision };
  }
  const { workspace, decision } = result;
  if (decision.kind === 'takeover') {
    deps.log.warn(
      {
        runId: run.id,
        workspaceId: workspace.id,
        generation: workspace.generation,
        previousNodeId: decision.previous.nodeId,
        previousHolder: decision.holder,
        nodeId: deps.nodeId,
      },
      decision.holder === 'gone'
        ? 'workspace taken over from a lost node'
        : 'workspace taken over from a node the agent could not reach',
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
