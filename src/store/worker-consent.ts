/**
 * A user's standing consent on their worker hosts: a scope on the ladder per worker,
 * and the kill switch, per worker or over every worker of the user. Reads are scoped
 * to the owner.
 */

import type { Scope } from '../contract/index.js';
import type { Queryable } from './db.js';
import { dateOrNull } from './rows.js';

/** The `worker_id` of a user's kill switch over every worker, present and future. */
export const ALL_WORKERS = '';

/** A user's standing consent on one worker (or, with `workerId` {@link ALL_WORKERS}, on all). */
export interface WorkerConsent {
  ownerUserId: string;
  workerId: string;
  scope: Scope;
  killSwitch: boolean;
  updatedAt: Date | null;
}

/** Decodes a `worker_consent` row. */
export function toConsent(r: Record<string, unknown>): WorkerConsent {
  return {
    ownerUserId: String(r.owner_user_id),
    workerId: String(r.worker_id),
    scope: String(r.scope) as Scope,
    killSwitch: r.kill_switch === true,
    updatedAt: dateOrNull(r.updated_at),
  };
}

/** What the gate reads for one user: the user-wide kill switch and each worker's row. */
export interface ConsentState {
  /** The kill switch over every worker. */
  allKilled: boolean;
  /** Per worker id; a worker without a row holds `none` and no kill switch. */
  workers: Map<string, WorkerConsent>;
}

/** The consent rows of `ownerUserId`. */
export async function readConsentState(q: Queryable, ownerUserId: string): Promise<ConsentState> {
  const rows = await q.query('select * from worker_consent where owner_user_id = $1', [
    ownerUserId,
  ]);
  const state: ConsentState = { allKilled: false, workers: new Map() };
  for (const row of rows.map(toConsent)) {
    if (row.workerId === ALL_WORKERS) state.allKilled = row.killSwitch;
    else state.workers.set(row.workerId, row);
  }
  return state;
}

/** Every consent row of `ownerUserId` (the user-wide one has `workerId` ''). */
export async function listWorkerConsent(
  q: Queryable,
  ownerUserId: string,
): Promise<WorkerConsent[]> {
  const rows = await q.query(
    'select * from worker_consent where owner_user_id = $1 order by worker_id',
    [ownerUserId],
  );
  return rows.map(toConsent);
}

/** Sets a worker's standing scope (never on {@link ALL_WORKERS}: scope is per worker). */
export async function setWorkerScope(
  q: Queryable,
  ownerUserId: string,
  workerId: string,
  scope: Scope,
): Promise<WorkerConsent> {
  const rows = await q.query(
    `insert into worker_consent (owner_user_id, worker_id, scope) values ($1, $2, $3)
     on conflict (owner_user_id, worker_id) do update set scope = excluded.scope, updated_at = now()
     returning *`,
    [ownerUserId, workerId, scope],
  );
  return toConsent(rows[0]!);
}

/** Engages or releases the kill switch of one worker, or of all with {@link ALL_WORKERS}. */
export async function setKillSwitch(
  q: Queryable,
  ownerUserId: string,
  workerId: string,
  engaged: boolean,
): Promise<WorkerConsent> {
  const rows = await q.query(
    `insert into worker_consent (owner_user_id, worker_id, kill_switch) values ($1, $2, $3)
     on conflict (owner_user_id, worker_id) do update set kill_switch = excluded.kill_switch, updated_at = now()
     returning *`,
    [ownerUserId, workerId, engaged],
  );
  return toConsent(rows[0]!);
}

/**
 * Sets a worker's standing scope to `scope` only when that does not raise it (what an
 * agent token may do: give the agent less). The comparison is made by the statement
 * that writes, so a concurrent change cannot turn a lowering into a raise. Returns the
 * row as it now is and whether it was set: `lowered` false means `scope` is above what
 * the worker holds, and nothing changed.
 */
export async function lowerWorkerScope(
  q: Queryable,
  ownerUserId: string,
  workerId: string,
  scope: Scope,
): Promise<{ consent: WorkerConsent; lowered: boolean }> {
  // `none` is the bottom rung: setting it never raises anything.
  if (scope === 'none') {
    return { consent: await setWorkerScope(q, ownerUserId, workerId, scope), lowered: true };
  }
  const rows = await q.query(
    `update worker_consent set scope = $3, updated_at = now()
     where owner_user_id = $1 and worker_id = $2
       and array_position(array['none','observe','full'], scope)
           >= array_position(array['none','observe','full'], $3::text)
     returning *`,
    [ownerUserId, workerId, scope],
  );
  if (rows[0]) return { consent: toConsent(rows[0]), lowered: true };
  const current = await q.query(
    'select * from worker_consent where owner_user_id = $1 and worker_id = $2',
    [ownerUserId, workerId],
  );
  const consent: WorkerConsent = current[0]
    ? toConsent(current[0])
    : { ownerUserId, workerId, scope: 'none', killSwitch: false, updatedAt: null };
  return { consent, lowered: false };
}
