/**
 * The caller's worker hosts: the list (stored and live, with consent), the standing
 * scope of one, the kill switch, and the routing records of calls sent to them. Only
 * the caller's own: another user's worker, record or id reads as absent. Consent
 * itself is decided by the gate on the agent (`src/agent/consent-gate.ts`); these
 * routes only record what the user chose.
 *
 * Whatever gives the agent less takes any token: lowering a standing scope, turning a
 * kill switch on. Whatever gives it more takes a person token (403 `person_required`
 * for an agent token): raising a scope, turning a kill switch off. Turning a switch on
 * also stops the calls already running on the workers it covers, on every agent node
 * (see `store/kill-switch-notices.ts`).
 *
 * @module
 */

import {
  isScope,
  type KillSwitchAnswer,
  MAX_ID_CHARS,
  SCOPES,
  type Scope,
  type SetScopeAnswer,
} from '../contract/index.js';
import {
  ALL_WORKERS,
  announceKillSwitch,
  getWorkerInvocation,
  insertAuditEvent,
  listWorkerConsent,
  listWorkerInvocations,
  lowerWorkerScope,
  setKillSwitch,
  setWorkerScope,
  type WorkerConsent,
} from '../store/index.js';
import type { RouteContext } from './api-deps.js';
import { decidedBy, requirePerson } from './auth.js';
import { ApiError, invalidField } from './http-errors.js';
import { BODY_LIMIT_BYTES, readJsonObject, rejectUnknownFields, sendJson } from './http-io.js';
import { listLimit, oneParam } from './page-query.js';
import { workerConsentView, workerInvocationView } from './views.js';
import { callerWorkers, isCallerWorker } from './worker-directory.js';

function workerNotFound(workerId: string): ApiError {
  return new ApiError(
    'not_found',
    `not_found: worker "${workerId}" has never connected for you; "memql workers ls" (GET /v1/workers) lists yours`,
  );
}

/** The caller's worker id from a path or body; a 404 unless it is theirs. */
async function ownWorker(ctx: RouteContext, workerId: string, field: string): Promise<string> {
  if (workerId.length === 0 || workerId.length > MAX_ID_CHARS) {
    throw invalidField(field, `expected a worker id of 1 to ${MAX_ID_CHARS} characters`);
  }
  if (!(await isCallerWorker(ctx.deps.db, ctx.deps.workers, ctx.caller.userId, workerId))) {
    throw workerNotFound(workerId);
  }
  return workerId;
}

/** `GET /v1/workers`: the caller's workers, the user-wide kill switch beside them. */
export async function listWorkersRoute(ctx: RouteContext): Promise<void> {
  sendJson(ctx.res, 200, await callerWorkers(ctx.deps.db, ctx.deps.workers, ctx.caller.userId));
}

/**
 * `PUT /v1/workers/:workerId/scope` `{scope}`: sets the standing scope to any rung,
 * lower included (how a user narrows or revokes what they granted). An agent token
 * may only keep or lower it: a raise is `person_required`, and changes nothing.
 */
export async function setWorkerScopeRoute(ctx: RouteContext): Promise<void> {
  const body = await readJsonObject(ctx.req, BODY_LIMIT_BYTES);
  rejectUnknownFields(body, ['scope']);
  const scope = body.scope;
  if (!isScope(scope)) throw invalidField('scope', `expected one of ${SCOPES.join(', ')}`);
  const userId = ctx.caller.userId;
  const workerId = await ownWorker(ctx, ctx.params[0]!, 'workerId');
  const answer = await ctx.deps.db.transaction(async (tx) => {
    const before = (await listWorkerConsent(tx, userId)).find((c) => c.workerId === workerId);
    const previousScope: Scope = before?.scope ?? 'none';
    let consent: WorkerConsent;
    if (ctx.caller.tokenKind === 'person') {
      consent = await setWorkerScope(tx, userId, workerId, scope);
    } else {
      // Compared where it is written, so a raise meanwhile cannot be read as a lowering.
      const lowered = await lowerWorkerScope(tx, userId, workerId, scope);
      if (!lowered.lowered) requirePerson(ctx.caller, "raising a worker's standing scope");
      consent = lowered.consent;
    }
    await insertAuditEvent(tx, {
      eventType: 'worker_scope.set',
      ownerUserId: userId,
      metadata: { workerId, scope, previousScope, ...decidedBy(ctx.caller) },
    });
    const answer: SetScopeAnswer = { consent: workerConsentView(consent), previousScope };
    return answer;
  });
  ctx.log.info({ workerId, scope, previousScope: answer.previousScope }, 'worker scope set');
  sendJson(ctx.res, 200, answer);
}

/**
 * `POST /v1/workers/kill-switch` `{engaged, workerId?}`: the user-wide switch (every
 * worker, those connected later too) without `workerId`, else one worker's. Turning
 * it on takes any token and stops the calls running on the workers it covers (they
 * answer `kill_switch_engaged`); turning it off takes a person token.
 */
export async function killSwitchRoute(ctx: RouteContext): Promise<void> {
  const body = await readJsonObject(ctx.req, BODY_LIMIT_BYTES);
  rejectUnknownFields(body, ['engaged', 'workerId']);
  const { engaged, workerId: given } = body;
  if (typeof engaged !== 'boolean') {
    throw invalidField('engaged', 'expected true (computer use off) or false (back on)');
  }
  if (given !== undefined && typeof given !== 'string') {
    throw invalidField('workerId', 'expected a worker id; omit it for every worker');
  }
  if (given === '') throw invalidField('workerId', 'empty; omit it for every worker');
  if (!engaged) requirePerson(ctx.caller, 'turning the kill switch off');
  const userId = ctx.caller.userId;
  const workerId = given === undefined ? ALL_WORKERS : await ownWorker(ctx, given, 'workerId');
  const consent = await ctx.deps.db.transaction(async (tx) => {
    const row = await setKillSwitch(tx, userId, workerId, engaged);
    // Delivered at commit to every agent node listening, this one included.
    if (engaged) await announceKillSwitch(tx, userId, workerId);
    await insertAuditEvent(tx, {
      eventType: 'worker_kill_switch.set',
      ownerUserId: userId,
      metadata: {
        workerId: workerId === ALL_WORKERS ? null : workerId,
        engaged,
        ...decidedBy(ctx.caller),
      },
    });
    return row;
  });
  // This node's own calls stop now, without waiting for the notice (PGlite sends none).
  const stopped = engaged
    ? (ctx.deps.workerCalls?.stopForKillSwitch(
        userId,
        workerId === ALL_WORKERS ? null : workerId,
      ) ?? 0)
    : 0;
  ctx.log.info({ workerId: workerId || 'all', engaged, stopped }, 'worker kill switch set');
  const answer: KillSwitchAnswer = {
    killSwitch: {
      workerId: workerId === ALL_WORKERS ? null : workerId,
      engaged: consent.killSwitch,
      updatedAt: consent.updatedAt === null ? null : consent.updatedAt.toISOString(),
    },
  };
  sendJson(ctx.res, 200, answer);
}

/** `GET /v1/worker-invocations?runId=&workerId=&limit=`: the caller's routing records, newest first. */
export async function listWorkerInvocationsRoute(ctx: RouteContext): Promise<void> {
  for (const name of ctx.query.keys()) {
    if (!['runId', 'workerId', 'limit'].includes(name)) {
      throw invalidField(name, 'unknown parameter; expected only runId, workerId, limit');
    }
  }
  const runId = oneParam(ctx.query, 'runId');
  const workerId = oneParam(ctx.query, 'workerId');
  const rows = await listWorkerInvocations(ctx.deps.db, ctx.caller.userId, {
    ...(runId === undefined ? {} : { runId }),
    ...(workerId === undefined ? {} : { workerId }),
    limit: listLimit(ctx.query),
  });
  sendJson(ctx.res, 200, { invocations: rows.map(workerInvocationView) });
}

/** `GET /v1/worker-invocations/:id`: one routing record. */
export async function getWorkerInvocationRoute(ctx: RouteContext): Promise<void> {
  const id = ctx.params[0]!;
  const row = await getWorkerInvocation(ctx.deps.db, ctx.caller.userId, id);
  if (row === null) {
    throw new ApiError('not_found', `not_found: worker invocation "${id}" does not exist`);
  }
  sendJson(ctx.res, 200, { invocation: workerInvocationView(row) });
}
