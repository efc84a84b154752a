/**
 * Worker hosts as the store keeps them: every worker a user has connected, with what
 * it offered and when it was last connected. Reads are scoped to the owner: a user
 * never sees another user's workers.
 */

import type { Queryable } from './db.js';
import { date, dateOrNull, jsonColumn, textOrNull } from './rows.js';

/** A worker host as last seen. */
export interface WorkerHostRecord {
  ownerUserId: string;
  workerId: string;
  os: string;
  provides: string[];
  version: string;
  /** The agent node it is (or was last) connected to. */
  agentNodeId: string;
  /** Where that agent's peers reach it (`host:port`); null when it takes no forwarded calls. */
  agentAddress: string | null;
  firstSeenAt: Date;
  connectedAt: Date;
  /** Null while it is connected (as the agent it dialled last recorded). */
  disconnectedAt: Date | null;
  /**
   * Whether its stream is up as of now, on the word of the agent holding it: not
   * disconnected, and vouched for ({@link touchWorkerLinks}) within the freshness window.
   */
  linkLive: boolean;
  /** When the agent holding it last vouched for its stream. */
  seenAt: Date;
}

/**
 * How long an agent's word that it holds a worker's stream lasts, ms: three of its
 * refreshes ({@link WORKER_LINK_REFRESH_MS}). A link older than this is taken as gone
 * (its agent died without recording the disconnection).
 */
export const WORKER_LINK_FRESH_MS = 15_000;
/** How often an agent vouches for the worker streams it holds, ms. */
export const WORKER_LINK_REFRESH_MS = 5_000;

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
    agentAddress: textOrNull(r.agent_address),
    linkLive: r.link_live === true,
    seenAt: date(r.seen_at),
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
  > &
    Partial<Pick<WorkerHostRecord, 'agentAddress'>>,
): Promise<Date> {
  const rows = await q.query(
    `insert into worker_host (owner_user_id, worker_id, os, provides, version, agent_node_id,
       agent_address)
     values ($1, $2, $3, $4::text::jsonb, $5, $6, $7)
     on conflict (owner_user_id, worker_id) do update set os = excluded.os,
       provides = excluded.provides, version = excluded.version,
       agent_node_id = excluded.agent_node_id, agent_address = excluded.agent_address,
       connected_at = now(), seen_at = now(), disconnected_at = null
     returning connected_at`,
    [
      w.ownerUserId,
      w.workerId,
      w.os,
      JSON.stringify(w.provides),
      w.version,
      w.agentNodeId,
      w.agentAddress ?? null,
    ],
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

/**
 * Vouches, as `agentNodeId`, for the worker streams it holds now (one statement for
 * all of them), so other agents keep finding them there ({@link WorkerHostRecord.linkLive}).
 */
export async function touchWorkerLinks(
  q: Queryable,
  agentNodeId: string,
  links: readonly { readonly ownerUserId: string; readonly workerId: string }[],
): Promise<void> {
  if (links.length === 0) return;
  await q.execute(
    `update worker_host set seen_at = now()
     from unnest($2::text[], $3::text[]) as l(owner_user_id, worker_id)
     where worker_host.owner_user_id = l.owner_user_id and worker_host.worker_id = l.worker_id
       and worker_host.agent_node_id = $1 and worker_host.disconnected_at is null`,
    [agentNodeId, links.map((l) => l.ownerUserId), links.map((l) => l.workerId)],
  );
}

const HOST_COLUMNS = `*, (disconnected_at is null
  and seen_at > now() - ($2 * interval '1 millisecond')) as link_live`;

/**
 * The worker hosts `ownerUserId` has connected, by id; a link counts as live for
 * `freshMs` after its agent last vouched for it (default {@link WORKER_LINK_FRESH_MS}).
 */
export async function listWorkerHosts(
  q: Queryable,
  ownerUserId: string,
  freshMs = WORKER_LINK_FRESH_MS,
): Promise<WorkerHostRecord[]> {
  const rows = await q.query(
    `select ${HOST_COLUMNS} from worker_host where owner_user_id = $1 order by worker_id`,
    [ownerUserId, freshMs],
  );
  return rows.map(toWorkerHost);
}

/** One worker host of `ownerUserId`'s, as {@link listWorkerHosts} reads it; null if unknown. */
export async function getWorkerHost(
  q: Queryable,
  ownerUserId: string,
  workerId: string,
  freshMs = WORKER_LINK_FRESH_MS,
): Promise<WorkerHostRecord | null> {
  const rows = await q.query(
    `select ${HOST_COLUMNS} from worker_host where owner_user_id = $1 and worker_id = $3`,
    [ownerUserId, freshMs, workerId],
  );
  return rows[0] ? toWorkerHost(rows[0]) : null;
}
