/**
 * What the routes made of `workbenchHost` calls share (the file and process routes):
 * the caller's run checked first, one call with the caller's authority recorded with the
 * `?agentId=&taskId=` the caller gave, and a signal for a caller that goes away. A
 * refused call is answered with its code's status (`sendRefusal`), on every such route.
 *
 * @module
 */

import { type DispatchResult, parseEnvelope, resultFromError } from '../contract/index.js';
import { getRunForOwner } from '../store/index.js';
import type { RouteContext } from './api-deps.js';
import { ApiError } from './http-errors.js';

/**
 * What a refusal of an unknown run says to do, in every interface's words: a model on
 * MCP reads the same message a script on HTTP does.
 */
export function runMissing(runId: string): string {
  return `not_found: run "${runId}" does not exist; open one first (open_run over MCP, POST /v1/runs over HTTP, memql runs create)`;
}

/** Refuses a run that is not the caller's with a 404, as if it did not exist. */
export async function requireOwnRun(
  ctx: Pick<RouteContext, 'deps' | 'caller'>,
  runId: string,
): Promise<void> {
  if ((await getRunForOwner(ctx.deps.db, runId, ctx.caller.userId)) === null) {
    throw new ApiError('not_found', runMissing(runId));
  }
}

/**
 * One `workbenchHost` call with the caller's authority, recorded with the
 * `?agentId=&taskId=` the caller gave (`api` and the route's `taskId` when it gave none).
 */
export async function call(
  ctx: RouteContext,
  request: { runId: string; action: string; args: unknown },
  signal: AbortSignal,
  taskId = 'files',
): Promise<DispatchResult> {
  const parsed = parseEnvelope({
    ...request,
    agentId: ctx.query.get('agentId') ?? 'api',
    taskId: ctx.query.get('taskId') ?? taskId,
  });
  if (!parsed.ok) return parsed;
  try {
    return (await ctx.deps.dispatcher.dispatch(parsed.envelope, ctx.caller.authority, { signal }))
      .result;
  } catch (err) {
    ctx.log.error({ err, runId: request.runId }, 'route dispatch threw');
    return resultFromError(err);
  }
}

/**
 * One call on the route's run (its first path parameter), checked to be the caller's
 * first; aborted when the caller goes away, unless `signal` says otherwise.
 */
export async function ownRunCall(
  ctx: RouteContext,
  action: string,
  args: Record<string, unknown>,
  options: { taskId: string; callId?: string | undefined; signal?: AbortSignal | undefined },
): Promise<DispatchResult> {
  const runId = ctx.params[0]!;
  await requireOwnRun(ctx, runId);
  return call(
    ctx,
    { runId, action, args, ...(options.callId === undefined ? {} : { callId: options.callId }) },
    options.signal ?? callerGone(ctx),
    options.taskId,
  );
}

/** Aborts when the caller goes away before the answer is complete. */
export function callerGone(ctx: RouteContext): AbortSignal {
  const controller = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) controller.abort();
  });
  return controller.signal;
}
