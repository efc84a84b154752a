import { createHash } from 'node:crypto';
import type { ReleasedReason, WorkspaceStatus } from '../contract/index.js';
import type { Queryable } from './db.js';
import { date, dateOrNull, textOrNull } from './rows.js';

export type { ReleasedReason, WorkspaceStatus };

/** A workspace row. */
export interface Workspace {
  id: string;
  runId: string;
  /** The replica holding the warm directory; null on rows written before node ids. */
  nodeId: string | null;
  ownerUserId: string;
  status: WorkspaceStatus;
  /**
   * The fencing token: each successor row of a run holds a higher generation than the
   * row it replaced, and only the live row's node at its generation is the holder.
   */
  generation: number;
  releasedReason: ReleasedReason | null;
  createdAt: Date;
  updatedAt: Date;
  releasedAt: Date | null;
}

/** The workspace columns every query of a whole row reads, in {@link toWorkspace}'s order. */
export const WORKSPACE_COLUMNS = `id, run_id, node_id, owner_user_id, status, generation, released_reason,
  created_at, updated_at, released_at`;

/** A workspace row as read with {@link WORKSPACE_COLUMNS}. */
export function toWorkspace(r: Record<string, unknown>): Workspace {
  return {
    id: String(r.id),
    runId: String(r.run_id),
    nodeId: textOrNull(r.node_id),
    ownerUserId: String(r.owner_user_id),
    status: r.status as WorkspaceStatus,
    generation: Number(r.generation),
    releasedReason: textOrNull(r.released_reason) as ReleasedReason | null,
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
    releasedAt: dateOrNull(r.released_at),
  };
}

/** The workspace id for a run on a node: stable, so a node finds its own row again. */
export function workspaceIdFor(runId: string, nodeId: string): string {
  const digest = createHash('sha256').update(`${runId}\n${nodeId}`).digest('hex');
  return `ws_${digest.slice(0, 32)}`;
}

/** The run's live (provisioned) workspace, if any. */
export async function getLiveWorkspace(q: Queryable, runId: string): Promise<Workspace | null> {
  const rows = await q.query(
    `select ${WORKSPACE_COLUMNS} from workbench_workspace where run_id = $1 and status = 'provisioned'`,
    [runId],
  );
  return rows[0] ? toWorkspace(rows[0]) : null;
}

/** Reads one workspace by id. */
export async function getWorkspace(q: Queryable, id: string): Promise<Workspace | null> {
  const rows = await q.query(`select ${WORKSPACE_COLUMNS} from workbench_workspace where id = $1`, [
    id,
  ]);
  return rows[0] ? toWorkspace(rows[0]) : null;
}

/**
 * Makes `nodeId`'s row for the run live, at a generation above every earlier row of
 * the run. A released row of the same node and run is brought back rather than
 * duplicated (its id is derived from both). Another live row for the run makes this a
 * `conflict`: release it first, in the same transaction.
 */
export async function provisionWorkspace(
  q: Queryable,
  ws: { runId: string; nodeId: string; ownerUserId: string },
): Promise<Workspace> {
  const rows = await q.query(
    `insert into workbench_workspace (id, run_id, node_id, owner_user_id, generation)
     values ($1, $2, $3, $4,
       (select coalesce(max(generation), 0) + 1 from workbench_workspace where run_id = $2))
     on conflict (id) do update set status = 'provisioned', released_reason = null,
       released_at = null, updated_at = now(), owner_user_id = excluded.owner_user_id,
       generation = excluded.generation
     where workbench_workspace.status = 'released'
     returning ${WORKSPACE_COLUMNS}`,
    [workspaceIdFor(ws.runId, ws.nodeId), ws.runId, ws.nodeId, ws.ownerUserId],
  );
  if (rows[0]) return toWorkspace(rows[0]);
  // The row exists and is live (or deleted): report it as it is.
  const existing = await getWorkspace(q, workspaceIdFor(ws.runId, ws.nodeId));
  return existing!;
}

/**
 * Stamps `nodeId` on a live row that names no node (written before node ids
 * existed), adopting it. Returns the row, or null when it was claimed meanwhile.
 */
export async function adoptUnownedWorkspace(
  q: Queryable,
  id: string,
  nodeId: string,
): Promise<Workspace | null> {
  const rows = await q.query(
    `update workbench_workspace set node_id = $2, updated_at = now()
     where id = $1 and node_id is null and status = 'provisioned' returning ${WORKSPACE_COLUMNS}`,
    [id, nodeId],
  );
  return rows[0] ? toWorkspace(rows[0]) : null;
}

/** Releases a live workspace. False when it was not live (already released: idempotent). */
export async function releaseWorkspace(
  q: Queryable,
  id: string,
  reason: ReleasedReason,
): Promise<boolean> {
  const n = await q.execute(
    `update workbench_workspace set status = 'released', released_reason = $2,
       released_at = now(), updated_at = now()
     where id = $1 and status = 'provisioned'`,
    [id, reason],
  );
  return n > 0;
}

/**
 * Releases the live row `id` only while `nodeId` holds it at `generation`: a draining
 * node hands a workspace off this way and never releases one a successor now holds.
 */
export async function releaseHeldWorkspace(
  q: Queryable,
  held: { id: string; nodeId: string; generation: number },
  reason: ReleasedReason,
): Promise<Workspace | null> {
  const rows = await q.query(
    `update workbench_workspace set status = 'released', released_reason = $4,
       released_at = now(), updated_at = now()
     where id = $1 and node_id = $2 and generation = $3 and status = 'provisioned'
     returning ${WORKSPACE_COLUMNS}`,
    [held.id, held.nodeId, held.generation, reason],
  );
  return rows[0] ? toWorkspace(rows[0]) : null;
}

/** Who holds a run's workspace now: the live row's node and generation. */
export interface WorkspaceHolder {
  workspaceId: string;
  nodeId: string | null;
  generation: number;
  ownerUserId: string;
}

/**
 * The run's live holder, or null when no row is live or the run is deleted. Reads
 * with `for share` when `lock` is set, so a commit checking its fence keeps the
 * holder from changing until it ends.
 */
export async function getWorkspaceHolder(
  q: Queryable,
  runId: string,
  opts: { lock?: boolean } = {},
): Promise<WorkspaceHolder | null> {
  const rows = await q.query(
    `select w.id, w.node_id, w.generation, w.owner_user_id from workbench_workspace w
     join run r on r.id = w.run_id
     where w.run_id = $1 and w.status = 'provisioned' and r.deleted_at is null
     ${opts.lock ? 'for share of w' : ''}`,
    [runId],
  );
  const r = rows[0];
  return r
    ? {
        workspaceId: String(r.id),
        nodeId: textOrNull(r.node_id),
        generation: Number(r.generation),
        ownerUserId: String(r.owner_user_id),
      }
    : null;
}

/** Releases the run's live workspace, if any, returning it as it was before. */
export async function releaseLiveWorkspace(
  q: Queryable,
  runId: string,
  reason: ReleasedReason,
): Promise<Workspace | null> {
  const rows = await q.query(
    `update workbench_workspace set status = 'released', released_reason = $2,
       released_at = now(), updated_at = now()
     where run_id = $1 and status = 'provisioned' returning ${WORKSPACE_COLUMNS}`,
    [runId, reason],
  );
  return rows[0] ? toWorkspace(rows[0]) : null;
}

/** Marks every workspace row of a run deleted; returns how many changed. */
export async function markRunWorkspacesDeleted(q: Queryable, runId: string): Promise<number> {
  return q.execute(
    `update workbench_workspace set status = 'deleted',
       released_reason = coalesce(released_reason, 'run_deleted'),
       released_at = coalesce(released_at, now()), updated_at = now()
     where run_id = $1 and status <> 'deleted'`,
    [runId],
  );
}

/**
 * A user's workspaces, newest first; released ones only when asked. `before` (a workspace
 * id of the user's) starts the page after it, for paging.
 */
export async function listWorkspacesForOwner(
  q: Queryable,
  ownerUserId: string,
  opts: { includeReleased?: boolean; limit?: number; before?: string } = {},
): Promise<Workspace[]> {
  const rows = await q.query(
    `select ${WORKSPACE_COLUMNS} from workbench_workspace w
     where owner_user_id = $1 and (status = 'provisioned' or ($2 and status = 'released'))
       and ($4::text is null or (w.created_at, w.id) < (
         select b.created_at, b.id from workbench_workspace b
         where b.id = $4::text and b.owner_user_id = $1))
     order by created_at desc, id desc limit $3`,
    [ownerUserId, opts.includeReleased ?? false, opts.limit ?? 200, opts.before ?? null],
  );
  return rows.map(toWorkspace);
}

/** Whether `workspaceId` is one of `ownerUserId`'s workspaces. */
export async function ownsWorkspace(
  q: Queryable,
  ownerUserId: string,
  workspaceId: string,
): Promise<boolean> {
  const rows = await q.query(
    `select 1 from workbench_workspace where id = $1 and owner_user_id = $2`,
    [workspaceId, ownerUserId],
  );
  return rows.length > 0;
}

/** Live workspaces that name a node, for its sweeper. */
export async function listLiveWorkspacesForNode(
  q: Queryable,
  nodeId: string,
): Promise<Workspace[]> {
  const rows = await q.query(
    `select ${WORKSPACE_COLUMNS} from workbench_workspace where node_id = $1 and status = 'provisioned'
     order by id`,
    [nodeId],
  );
  return rows.map(toWorkspace);
}

/** Live workspaces whose run has already reached a terminal status (a missed release). */
export async function listLiveWorkspacesOfEndedRuns(
  q: Queryable,
  limit = 100,
): Promise<Workspace[]> {
  const rows = await q.query(
    `select ${WORKSPACE_COLUMNS.replace(/(\w+)/g, 'w.$1')} from workbench_workspace w
     join run r on r.id = w.run_id
     where w.status = 'provisioned' and r.status <> 'running'
     order by w.id limit $1`,
    [limit],
  );
  return rows.map(toWorkspace);
}

/**
 * Which of `runIds` have a workspace row of `nodeId`'s, live or not: the runs whose
 * directory in its workbench root the node made itself (it makes one only for a run it
 * holds, after the row). Read by the primary key, one statement for the whole list.
 */
export async function listRunsHeldByNode(
  q: Queryable,
  nodeId: string,
  runIds: readonly string[],
): Promise<Set<string>> {
  if (runIds.length === 0) return new Set();
  const rows = await q.query(
    `select run_id from workbench_workspace
     where id in (select jsonb_array_elements_text($1::text::jsonb)) and node_id = $2`,
    [JSON.stringify(runIds.map((runId) => workspaceIdFor(runId, nodeId))), nodeId],
  );
  return new Set(rows.map((r) => String(r.run_id)));
}
