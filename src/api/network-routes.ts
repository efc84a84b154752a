/**
 * A run's network policy on the API: the `network` of `POST /v1/runs` and
 * `PUT /v1/runs/:runId/network`, both checked against the operator's bounds
 * (`MEMQL_EGRESS_CEILING`, `MEMQL_EGRESS_SECRETS`) before anything is written, each
 * change an audit event `run_network.set` (the rules as written and the secret names;
 * a secret's value never reaches this node's API).
 *
 * Only the run's owner may change it, with either kind of token: a tool loop's agent
 * token may, because the ceiling is the guard (a model can ask only for what the
 * operator allows every run). Another user's run reads as absent.
 *
 * @module
 */

import {
  checkRunNetwork,
  type EgressBounds,
  effectivePolicy,
  type ParsedRunNetwork,
  parseRunNetwork,
  type RunNetwork,
} from '../contract/index.js';
import { getRunForOwner, insertAuditEvent, type Queryable, setRunNetwork } from '../store/index.js';
import type { RouteContext } from './api-deps.js';
import { decidedBy } from './auth.js';
import { ApiError, invalidField } from './http-errors.js';
import { BODY_LIMIT_BYTES, readJsonObject, sendJson } from './http-io.js';
import { runView } from './views.js';

/** No ceiling and no secrets: what a node without egress settings allows. */
const NO_BOUNDS: EgressBounds = { ceiling: [], secretNames: [] };

/**
 * A request's network, parsed (`invalid_arguments` naming the field) and within the
 * operator's bounds (`egress_not_allowed`, 403, the refusal's data as its payload).
 */
export function checkedNetwork(ctx: RouteContext, value: unknown, field: string): ParsedRunNetwork {
  const parsed = parseRunNetwork(value, field);
  if (!parsed.ok) throw invalidField(parsed.field, parsed.problem);
  const refusal = checkRunNetwork(parsed.value, ctx.deps.egress ?? NO_BOUNDS);
  if (refusal !== null) {
    throw new ApiError('egress_not_allowed', refusal.message, { payload: refusal.payload });
  }
  return parsed.value;
}

/** Records a run's network as set, in the transaction that set it. */
export async function auditNetwork(
  q: Queryable,
  ctx: RouteContext,
  runId: string,
  network: RunNetwork,
  change: 'created' | 'replaced',
): Promise<void> {
  await insertAuditEvent(q, {
    eventType: 'run_network.set',
    runId,
    ownerUserId: ctx.caller.userId,
    metadata: {
      change,
      allow: network.allow.join(','),
      rules: network.allow.length,
      secrets: network.secrets.join(','),
      ...decidedBy(ctx.caller),
    },
  });
}

/**
 * `PUT /v1/runs/:runId/network` `{allow, secrets?}`: replaces the run's network
 * (`{allow: []}` takes it away). A running command's next connection sees it, no
 * restart needed. An ended run is 409 `run_ended`.
 */
export async function setRunNetworkRoute(ctx: RouteContext): Promise<void> {
  const body = await readJsonObject(ctx.req, BODY_LIMIT_BYTES);
  const runId = ctx.params[0]!;
  const userId = ctx.caller.userId;
  const current = await getRunForOwner(ctx.deps.db, runId, userId);
  if (current === null) {
    throw new ApiError('not_found', `not_found: run "${runId}" does not exist`);
  }
  const { network } = checkedNetwork(ctx, body, 'body');
  const run = await ctx.deps.db.transaction(async (tx) => {
    const changed = await setRunNetwork(tx, runId, userId, network);
    if (changed !== null) await auditNetwork(tx, ctx, runId, network, 'replaced');
    return changed;
  });
  if (run === null) {
    const again = await getRunForOwner(ctx.deps.db, runId, userId);
    if (again === null) {
      throw new ApiError('not_found', `not_found: run "${runId}" does not exist`);
    }
    throw new ApiError(
      'run_ended',
      `run_ended: run "${runId}" ended as "${again.status}"; its network cannot change. Start a new run with the network it needs.`,
    );
  }
  ctx.deps.onRunNetworkChanged?.(runId, effectivePolicy(run.network, ctx.deps.egress ?? NO_BOUNDS));
  ctx.log.info(
    { runId, rules: network.allow.length, secrets: network.secrets },
    'run network replaced',
  );
  sendJson(ctx.res, 200, { run: runView(run) });
}
