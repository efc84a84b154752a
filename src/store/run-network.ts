/**
 * A run's network policy after its creation: the change (`PUT /v1/runs/:runId/network`),
 * the read the workbench makes for each command and proxy connection, and the notice
 * that tells every workbench node a run's policy changed. Several nodes share one
 * Postgres, and the node whose API took the change is rarely the one running the run's
 * commands: the notice (Postgres `NOTIFY`, sent by the transaction that wrote the
 * change, so it is heard only once the change is committed) reaches them all. PGlite is
 * one process, whose API tells its own workbench directly.
 *
 * @module
 */

import type { RunNetwork } from '../contract/index.js';
import type { Db, Queryable, Subscription } from './db.js';
import { jsonColumn } from './rows.js';
import { RUN_COLUMNS, type Run, toRun } from './runs.js';

/** The channel (payload: the run id). */
export const RUN_NETWORK_CHANNEL = 'memql_run_network_changed';

/**
 * Replaces the network policy of `ownerUserId`'s running run `runId` and notifies
 * {@link RUN_NETWORK_CHANNEL} (delivered at commit: call it in the transaction that
 * records the change's audit event). Null when the run is not that user's, is deleted,
 * or has ended (the caller tells those apart with `getRunForOwner`).
 */
export async function setRunNetwork(
  q: Queryable,
  runId: string,
  ownerUserId: string,
  network: RunNetwork,
): Promise<Run | null> {
  const rows = await q.query(
    `update run set egress_allow = $3::text::jsonb, egress_secrets = $4::text::jsonb,
       updated_at = now()
     where id = $1 and owner_user_id = $2 and status = 'running' and deleted_at is null
     returning ${RUN_COLUMNS}`,
    [runId, ownerUserId, JSON.stringify(network.allow), JSON.stringify(network.secrets)],
  );
  if (rows[0] === undefined) return null;
  await q.query('select pg_notify($1, $2)', [RUN_NETWORK_CHANNEL, runId]);
  return toRun(rows[0]);
}

/**
 * The network policy of a running run as stored, for the workbench; null when the run
 * does not exist, is deleted or has ended (its commands then reach nothing).
 */
export async function getRunNetwork(q: Queryable, runId: string): Promise<RunNetwork | null> {
  const rows = await q.query(
    `select egress_allow, egress_secrets from run
     where id = $1 and status = 'running' and deleted_at is null`,
    [runId],
  );
  const row = rows[0];
  if (row === undefined) return null;
  return {
    allow: jsonColumn<string[] | null>(row.egress_allow) ?? [],
    secrets: jsonColumn<string[] | null>(row.egress_secrets) ?? [],
  };
}

/**
 * Calls `onChanged` with the run id of every change {@link setRunNetwork} made, on any
 * node, and `onListening` each time the listening connection is (re)established: what
 * changed while it was down is not announced again, so the caller forgets what it
 * cached then. Null when the driver cannot listen (PGlite: one process).
 */
export function listenForRunNetwork(
  db: Db,
  onChanged: (runId: string) => void,
  onListening?: () => void,
): Promise<Subscription> | null {
  if (!db.listen) return null;
  return db.listen(RUN_NETWORK_CHANNEL, (payload) => onChanged(payload), onListening);
}
