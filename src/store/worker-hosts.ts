/**
 * Worker hosts as the store keeps them: every worker a user has connected, with what
 * it offered and when it was last connected. Reads are scoped to the owner: a user
 * never sees another user's workers.
 */

import type { Queryable } from './db.js';
import { date, dateOrNull, jsonColumn } from './rows.js';

/** A worker host as last seen. */
export interface WorkerHostRecord {
  ownerUserId: string;
  workerId: string;
  os: string;
  provides: string[];
  version: string;
  /** The agent node it is (or was last) connected to. */
  agentNodeId: string;
  firstSeenAt: Date;
  connectedAt: Date;
  /** Null while it is connected (as the agent it dialled last recorded). */
  disconnectedAt: Date | null;
}

function toWorkerHost(r: Record<string, unknown>): WorkerHostRecord {
  return {
    ownerUserId: String(r.owner_user_id),
    workerId: String(r.worker_id),
    os: String(r.os),
    provides: jsonColumn<string[]>(r.provides),
    version: String(r.version),
    agentNodeId: String(r.agent_node_id),
    firstSeenAt: date(r.first_seen_at),
    connectedAt: date(r.connected_at),
    disconnectedAt: dateOrNull(r.disconnected_at),
  };
}

/**
 * Records a worker's connection (its offer as of now) and returns the `connectedAt`
 * the row now holds: the database's clock, which {@link recordWorkerDisconnected}
 * compares against, so the caller passes this value back rather than its own clock's.
 */
export async function recordWorkerConnected(
  q: Queryable,
  w: Pick<
    WorkerHostRecord,
    'ownerUserId' | 'workerId' | 'os' | 'provides' | 'version' | 'agentNodeId'
  >,
): Promise<Date> {
  const rows = await q.query(
    `insert into worker_host (owner_user_id, worker_id, os, provides, version, agent_node_id)
     values ($1, $2, $3, $4::text::jsonb, $5, $6)
     on conflict (owner_user_id, worker_id) do update set os = excluded.os,
       provides = excluded.provides, version = excluded.version,
       agent_node_id = excluded.agent_node_id, connected_at = now(), disconnected_at = null
     returning connected_at`,
    [w.ownerUserId, w.workerId, w.os, JSON.stringify(w.provides), w.version, w.agentNodeId],
  );
  return date(rows[0]!.connected_at);
}

/**
 * Records that a worker's stream to `agentNodeId` ended, unless it has connected to
 * another agent since (its row then names that one). The agent records one worker's
 * connections and disconnections in order.
 */
export async function recordWorkerDisconnected(
  q: Queryable,
  ownerUserId: string,
  workerId: string,
  agentNodeId: string,
): Promise<void> {
  await q.execute(
    `update worker_host set disconnected_at = now()
     where owner_user_id = $1 and worker_id = $2 and agent_node_id = $3 and disconnected_at is null`,
    [ownerUserId, workerId, agentNodeId],
  );
}

/** The worker hosts `ownerUserId` has connected, by id. */
export async function listWorkerHosts(
  q: Queryable,
  ownerUserId: string,
): Promise<WorkerHostRecord[]> {
  const rows = await q.query(
    'select * from worker_host where owner_user_id = $1 order by worker_id',
    [ownerUserId],
  );
  return rows.map(toWorkerHost);
}
