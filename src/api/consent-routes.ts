/**
 * Consent requests (the cards the gate raises when a call needs more scope on a
 * worker than the user has given): the caller lists theirs, approves one (granting the
 * worker a standing scope, never lowering one it holds) or denies it. A request is
 * decided once: deciding it again is a 409 `invalid_arguments` and changes nothing
 * (the standing scope itself is changed with `PUT /v1/workers/:workerId/scope`).
 * Another user's request reads as absent.
 *
 * Listing takes any token; approving and denying take a person token only (403
 * `person_required` for an agent token, before anything is read): the user decides,
 * never the model that raised the request. The audit event records the token's kind
 * and id.
 *
 * @module
 */

import type { ApproveAnswer, ConsentStatus, DenyAnswer, Scope } from '../contract/index.js';
import { scopeCovers } from '../contract/index.js';
import {
  type ConsentDecision,
  type ConsentRequestRecord,
  decideConsentRequestIn,
  getConsentRequest,
  insertAuditEvent,
  listConsentRequests,
} from '../store/index.js';
import type { RouteContext } from './api-deps.js';
import { decidedBy, requirePerson } from './auth.js';
import { ApiError, invalidField } from './http-errors.js';
import { BODY_LIMIT_BYTES, readJsonObject, rejectUnknownFields, sendJson } from './http-io.js';
import { listLimit, oneParam } from './page-query.js';
import { consentRequestView, workerConsentView } from './views.js';

const STATUSES: readonly ConsentStatus[] = ['pending', 'approved', 'denied'];
/** The rungs an approval may grant: `none` is what denying leaves. */
const APPROVABLE: readonly Scope[] = ['observe', 'full'];

function requestNotFound(id: string): ApiError {
  return new ApiError(
    'not_found',
    `not_found: consent request "${id}" does not exist; "memql consent ls" lists your pending ones`,
  );
}

/** The refusal of deciding a request that was already decided. */
function alreadyDecided(r: ConsentRequestRecord): ApiError {
  const how = r.status === 'approved' ? `approved at ${r.decidedScope ?? '?'}` : 'denied';
  return new ApiError(
    'invalid_arguments',
    `invalid_arguments: consent request "${r.id}" was already ${how} at ${r.decidedAt?.toISOString() ?? '?'}; nothing changed. ` +
      `To change worker "${r.workerId}"'s standing scope, use "memql workers scope ${r.workerId} <none|observe|full>" (PUT /v1/workers/:workerId/scope)`,
    { status: 409 },
  );
}

/** `GET /v1/consent-requests?status=&limit=`: the caller's requests, newest first; pending by default. */
export async function listConsentRequestsRoute(ctx: RouteContext): Promise<void> {
  for (const name of ctx.query.keys()) {
    if (name !== 'status' && name !== 'limit') {
      throw invalidField(name, 'unknown parameter; expected only status, limit');
    }
  }
  const status = oneParam(ctx.query, 'status') ?? 'pending';
  if (!(STATUSES as readonly string[]).includes(status)) {
    throw invalidField('status', `expected one of ${STATUSES.join(', ')}`);
  }
  const rows = await listConsentRequests(ctx.deps.db, ctx.caller.userId, {
    status: status as ConsentStatus,
    limit: listLimit(ctx.query),
  });
  sendJson(ctx.res, 200, { requests: rows.map(consentRequestView) });
}

/** Decides the caller's request `id` at `scope` (null denies) with its audit event, in one transaction. */
async function decide(
  ctx: RouteContext,
  id: string,
  scope: Scope | null,
): Promise<Extract<ConsentDecision, { kind: 'decided' }>> {
  const userId = ctx.caller.userId;
  const decision: ConsentDecision = await ctx.deps.db.transaction(async (tx) => {
    const d = await decideConsentRequestIn(tx, userId, id, scope);
    if (d.kind === 'decided') {
      await insertAuditEvent(tx, {
        eventType: scope === null ? 'worker_consent.denied' : 'worker_consent.approved',
        runId: d.request.runId,
        ownerUserId: userId,
        metadata: {
          requestId: d.request.id,
          workerId: d.request.workerId,
          action: d.request.action,
          requiredScope: d.request.requiredScope,
          decidedScope: scope,
          standingScope: d.consent?.scope ?? null,
          ...decidedBy(ctx.caller),
        },
      });
    }
    return d;
  });
  if (decision.kind === 'not_found') throw requestNotFound(id);
  if (decision.kind === 'already_decided') throw alreadyDecided(decision.request);
  ctx.log.info(
    { requestId: id, workerId: decision.request.workerId, decidedScope: scope },
    scope === null ? 'consent request denied' : 'consent request approved',
  );
  return decision;
}

/**
 * `POST /v1/consent-requests/:id/approve` `{scope?}`: grants the request's worker a
 * standing scope, the request's `requiredScope` unless `scope` says otherwise. Less
 * than required is recorded as asked; `covers: false` and the message say the call
 * still will not run at that tier (the gate decides that, not this route).
 */
export async function approveConsentRoute(ctx: RouteContext): Promise<void> {
  requirePerson(ctx.caller, 'approving a consent request');
  const body = await readJsonObject(ctx.req, BODY_LIMIT_BYTES);
  rejectUnknownFields(body, ['scope']);
  const asked = body.scope;
  if (asked !== undefined && !(APPROVABLE as readonly unknown[]).includes(asked)) {
    throw invalidField(
      'scope',
      `expected ${APPROVABLE.join(' or ')} (or omit it for the scope the request needs); to refuse, deny the request`,
    );
  }
  const id = ctx.params[0]!;
  const request = await getConsentRequest(ctx.deps.db, ctx.caller.userId, id);
  if (request === null) throw requestNotFound(id);
  const scope = (asked as Scope | undefined) ?? request.requiredScope;
  const { request: decided, consent } = await decide(ctx, id, scope);
  // An approval always writes the worker's consent row; only a denial leaves none.
  if (consent === null) throw new Error('an approved consent request granted no scope');
  const covers = scopeCovers(consent.scope, decided.requiredScope);
  const message = covers
    ? `approved: worker "${decided.workerId}" now holds ${consent.scope}; repeat the call and it runs there (unless a kill switch is on)`
    : `approved at ${scope}, which is recorded, but the call needs ${decided.requiredScope}: it will still not run at ${consent.scope} ` +
      `(repeating it raises a new request). Approve that one at ${decided.requiredScope}, or run "memql workers scope ${decided.workerId} ${decided.requiredScope}"`;
  const answer: ApproveAnswer = {
    request: consentRequestView(decided),
    consent: workerConsentView(consent),
    covers,
    message,
  };
  sendJson(ctx.res, 200, answer);
}

/** `POST /v1/consent-requests/:id/deny`: the worker's standing scope stays as it was. */
export async function denyConsentRoute(ctx: RouteContext): Promise<void> {
  requirePerson(ctx.caller, 'denying a consent request');
  const body = await readJsonObject(ctx.req, BODY_LIMIT_BYTES);
  const stray = Object.keys(body)[0];
  if (stray !== undefined) throw invalidField(stray, 'unknown field; deny takes no fields');
  const decision = await decide(ctx, ctx.params[0]!, null);
  const answer: DenyAnswer = { request: consentRequestView(decision.request) };
  sendJson(ctx.res, 200, answer);
}
