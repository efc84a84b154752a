/**
 * Worker hosts as the store keeps them: every worker a user has connected (what it
 * offered, when it was last connected), the user's standing consent per worker (scope
 * on the ladder and the kill switch), consent requests, and the routing record of each
 * call sent to a worker. Every read is scoped to its owner: a user never sees another
 * user's workers, consent or records.
 */

import { randomBytes } from 'node:crypto';
import type { ConsentCard, ConsentStatus, Scope, UnmetNeed } from '../contract/index.js';
import type { Db, Queryable } from './db.js';
import { date, dateOrNull, textOrNull } from './rows.js';

/** The `worker_id` of a user's kill switch over every worker, present and future. */
export const ALL_WORKERS = '';

function json<T>(v: unknown): T {
  return (typeof v === 'string' ? JSON.parse(v) : v) as T;
}

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
    provides: json<string[]>(r.provides),
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

/** A user's standing consent on one worker (or, with `workerId` {@link ALL_WORKERS}, on all). */
export interface WorkerConsent {
  ownerUserId: string;
  workerId: string;
  scope: Scope;
  killSwitch: boolean;
  updatedAt: Date | null;
}

function toConsent(r: Record<string, unknown>): WorkerConsent {
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

/** A stored consent request. */
export interface ConsentRequestRecord {
  id: string;
  ownerUserId: string;
  workerId: string;
  runId: string;
  action: string;
  needs: UnmetNeed[];
  requiredScope: Scope;
  heldScope: Scope;
  summary: string;
  status: ConsentStatus;
  decidedScope: Scope | null;
  createdAt: Date;
  decidedAt: Date | null;
}

function toConsentRequest(r: Record<string, unknown>): ConsentRequestRecord {
  return {
    id: String(r.id),
    ownerUserId: String(r.owner_user_id),
    workerId: String(r.worker_id),
    runId: String(r.run_id),
    action: String(r.action),
    needs: json<UnmetNeed[]>(r.needs),
    requiredScope: String(r.required_scope) as Scope,
    heldScope: String(r.held_scope) as Scope,
    summary: String(r.summary),
    status: String(r.status) as ConsentStatus,
    decidedScope: textOrNull(r.decided_scope) as Scope | null,
    createdAt: date(r.created_at),
    decidedAt: dateOrNull(r.decided_at),
  };
}

/** The card of a stored consent request. */
export function consentCard(r: ConsentRequestRecord): ConsentCard {
  return {
    id: r.id,
    workerId: r.workerId,
    runId: r.runId,
    action: r.action,
    needs: r.needs,
    requiredScope: r.requiredScope,
    heldScope: r.heldScope,
    summary: r.summary,
    status: r.status,
  };
}

/** A consent request to raise. */
export type NewConsentRequest = Pick<
  ConsentRequestRecord,
  | 'ownerUserId'
  | 'workerId'
  | 'runId'
  | 'action'
  | 'needs'
  | 'requiredScope'
  | 'heldScope'
  | 'summary'
>;

/**
 * Raises a consent request, or returns the pending one that already asks the same
 * (same user, worker, run, needs and required scope): a call repeated while the user
 * has not answered does not stack up cards.
 */
export async function raiseConsentRequest(
  q: Queryable,
  r: NewConsentRequest,
): Promise<ConsentRequestRecord> {
  const needs = JSON.stringify(r.needs);
  const existing = await q.query(
    `select * from worker_consent_request
     where owner_user_id = $1 and worker_id = $2 and run_id = $3 and needs = $4::text::jsonb
       and required_scope = $5 and status = 'pending'
     order by created_at limit 1`,
    [r.ownerUserId, r.workerId, r.runId, needs, r.requiredScope],
  );
  if (existing[0]) return toConsentRequest(existing[0]);
  const id = `csr_${randomBytes(12).toString('base64url')}`;
  const rows = await q.query(
    `insert into worker_consent_request (id, owner_user_id, worker_id, run_id, action, needs,
       required_scope, held_scope, summary)
     values ($1, $2, $3, $4, $5, $6::text::jsonb, $7, $8, $9) returning *`,
    [
      id,
      r.ownerUserId,
      r.workerId,
      r.runId,
      r.action,
      needs,
      r.requiredScope,
      r.heldScope,
      r.summary,
    ],
  );
  return toConsentRequest(rows[0]!);
}

/** Consent requests of `ownerUserId`, newest first; `status` narrows them. */
export async function listConsentRequests(
  q: Queryable,
  ownerUserId: string,
  opts: { status?: ConsentStatus; limit?: number } = {},
): Promise<ConsentRequestRecord[]> {
  const rows = await q.query(
    `select * from worker_consent_request
     where owner_user_id = $1 and ($2::text is null or status = $2)
     order by created_at desc, id limit $3`,
    [ownerUserId, opts.status ?? null, opts.limit ?? 100],
  );
  return rows.map(toConsentRequest);
}

/** One consent request of `ownerUserId`; null when it is not theirs or does not exist. */
export async function getConsentRequest(
  q: Queryable,
  ownerUserId: string,
  id: string,
): Promise<ConsentRequestRecord | null> {
  const rows = await q.query(
    'select * from worker_consent_request where id = $1 and owner_user_id = $2',
    [id, ownerUserId],
  );
  return rows[0] ? toConsentRequest(rows[0]) : null;
}

/** The outcome of {@link decideConsentRequest}. */
export type ConsentDecision =
  | { kind: 'decided'; request: ConsentRequestRecord; consent: WorkerConsent | null }
  | { kind: 'not_found' }
  | { kind: 'already_decided'; request: ConsentRequestRecord };

/**
 * Approves a pending request at `scope` (granting the worker that standing scope,
 * never lowering one it already holds) or denies it (`scope` null), in one
 * transaction. A decided request stays as it was decided.
 */
export function decideConsentRequest(
  db: Db,
  ownerUserId: string,
  id: string,
  scope: Scope | null,
): Promise<ConsentDecision> {
  return db.transaction((q) => decideConsentRequestIn(q, ownerUserId, id, scope));
}

/**
 * {@link decideConsentRequest} inside a transaction the caller holds (to write, say,
 * its audit event in the same one).
 */
export async function decideConsentRequestIn(
  q: Queryable,
  ownerUserId: string,
  id: string,
  scope: Scope | null,
): Promise<ConsentDecision> {
  const rows = await q.query(
    `update worker_consent_request set status = $3, decided_scope = $4, decided_at = now()
     where id = $1 and owner_user_id = $2 and status = 'pending' returning *`,
    [id, ownerUserId, scope === null ? 'denied' : 'approved', scope],
  );
  if (!rows[0]) {
    const current = await getConsentRequest(q, ownerUserId, id);
    return current === null ? { kind: 'not_found' } : { kind: 'already_decided', request: current };
  }
  const request = toConsentRequest(rows[0]);
  if (scope === null) return { kind: 'decided', request, consent: null };
  const granted = await q.query(
    `insert into worker_consent (owner_user_id, worker_id, scope) values ($1, $2, $3)
     on conflict (owner_user_id, worker_id) do update set
       scope = case when array_position(array['none','observe','full'], worker_consent.scope)
                      >= array_position(array['none','observe','full'], excluded.scope)
                    then worker_consent.scope else excluded.scope end,
       updated_at = now()
     returning *`,
    [ownerUserId, request.workerId, scope],
  );
  return { kind: 'decided', request, consent: toConsent(granted[0]!) };
}

/** The routing record of one call sent to a worker host. */
export interface WorkerInvocation {
  id: string;
  ownerUserId: string;
  workerId: string;
  runId: string;
  action: string;
  callId: string | null;
  reroutedFrom: string;
  needs: UnmetNeed[];
  scope: Scope;
  /** `running` until the worker answers; `lost` when its stream ended first. */
  status: 'running' | 'succeeded' | 'failed' | 'lost';
  errorCode: string | null;
  startedAt: Date;
  finishedAt: Date | null;
}

function toInvocation(r: Record<string, unknown>): WorkerInvocation {
  return {
    id: String(r.id),
    ownerUserId: String(r.owner_user_id),
    workerId: String(r.worker_id),
    runId: String(r.run_id),
    action: String(r.action),
    callId: textOrNull(r.call_id),
    reroutedFrom: String(r.rerouted_from),
    needs: json<UnmetNeed[]>(r.needs),
    scope: String(r.scope) as Scope,
    status: String(r.status) as WorkerInvocation['status'],
    errorCode: textOrNull(r.error_code),
    startedAt: date(r.started_at),
    finishedAt: dateOrNull(r.finished_at),
  };
}

/** Records a call about to be sent to a worker; written before any frame goes out. */
export async function insertWorkerInvocation(
  q: Queryable,
  w: Pick<
    WorkerInvocation,
    'ownerUserId' | 'workerId' | 'runId' | 'action' | 'callId' | 'reroutedFrom' | 'needs' | 'scope'
  >,
): Promise<WorkerInvocation> {
  const id = `wiv_${randomBytes(12).toString('base64url')}`;
  const rows = await q.query(
    `insert into worker_invocation (id, owner_user_id, worker_id, run_id, action, call_id,
       rerouted_from, needs, scope)
     values ($1, $2, $3, $4, $5, $6, $7, $8::text::jsonb, $9) returning *`,
    [
      id,
      w.ownerUserId,
      w.workerId,
      w.runId,
      w.action,
      w.callId,
      w.reroutedFrom,
      JSON.stringify(w.needs),
      w.scope,
    ],
  );
  return toInvocation(rows[0]!);
}

/** Records how a worker call ended. */
export async function finishWorkerInvocation(
  q: Queryable,
  id: string,
  status: 'succeeded' | 'failed' | 'lost',
  errorCode: string | null,
): Promise<void> {
  await q.execute(
    `update worker_invocation set status = $2, error_code = $3, finished_at = now()
     where id = $1 and status = 'running'`,
    [id, status, errorCode],
  );
}

/** Routing records of `ownerUserId`, newest first, narrowed by run or worker. */
export async function listWorkerInvocations(
  q: Queryable,
  ownerUserId: string,
  opts: { runId?: string; workerId?: string; limit?: number } = {},
): Promise<WorkerInvocation[]> {
  const rows = await q.query(
    `select * from worker_invocation
     where owner_user_id = $1 and ($2::text is null or run_id = $2)
       and ($3::text is null or worker_id = $3)
     order by started_at desc, id limit $4`,
    [ownerUserId, opts.runId ?? null, opts.workerId ?? null, opts.limit ?? 100],
  );
  return rows.map(toInvocation);
}

/** One routing record of `ownerUserId`; null when it is not theirs or does not exist. */
export async function getWorkerInvocation(
  q: Queryable,
  ownerUserId: string,
  id: string,
): Promise<WorkerInvocation | null> {
  const rows = await q.query(
    'select * from worker_invocation where id = $1 and owner_user_id = $2',
    [id, ownerUserId],
  );
  return rows[0] ? toInvocation(rows[0]) : null;
}
