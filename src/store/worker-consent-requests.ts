/**
 * Consent requests (the cards a user approves or denies) raised when a call needs
 * more scope on a worker host than the user has given. Approving grants the worker a
 * standing scope in the same transaction. Reads are scoped to the owner.
 */

import { randomBytes } from 'node:crypto';
import type { ConsentCard, ConsentStatus, Scope, UnmetNeed } from '../contract/index.js';
import type { Db, Queryable } from './db.js';
import { date, dateOrNull, jsonColumn, textOrNull } from './rows.js';
import { toConsent, type WorkerConsent } from './worker-consent.js';

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
    needs: jsonColumn<UnmetNeed[]>(r.needs),
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
