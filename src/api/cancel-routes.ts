/**
 * Explicit cancels. A command belongs to the durable queue, not to the connection that
 * asked for it: a caller that goes away (or the agent node that forwarded the call)
 * does not cancel it. These routes do, by command id or by the `callId` of the call
 * that queued it (for a caller that never saw the command's id):
 *
 * | route | answer |
 * |---|---|
 * | `POST /v1/commands/:commandId/cancel` | `{command, effect}` |
 * | `POST /v1/runs/:runId/calls/:callId/cancel` | `{command, effect}` |
 *
 * `effect`: `cancelled` (it was queued: it ends now and never runs), `cancelling` (it
 * runs: its worker kills it and records `cancelled`), or `ended` (it had ended; nothing
 * changed). Another user's command reads as absent.
 *
 * @module
 */

import type { CancelAnswer, CancelEffect } from '../contract/index.js';
import { type Command, getCommand, requestCommandCancel } from '../store/index.js';
import type { RouteContext } from './api-deps.js';
import { commandOfCall } from './command-list.js';
import { sendJson } from './http-io.js';
import { commandAbsent } from './read-routes.js';
import { commandView } from './views.js';

/** Cancels `command` (the caller's) and answers it as it stands after. */
async function cancelAndAnswer(ctx: RouteContext, command: Command): Promise<void> {
  let effect: CancelEffect = 'ended';
  if (command.status === 'queued' || command.status === 'running') {
    const after =
      (ctx.deps.cancelCommand
        ? await ctx.deps.cancelCommand(command.id)
        : await requestCommandCancel(ctx.deps.db, command.id)) ?? command;
    if (after.status === 'running') effect = 'cancelling';
    else if (after.status === 'cancelled' && command.status === 'queued') effect = 'cancelled';
    command = after;
  }
  ctx.log.info({ commandId: command.id, effect }, 'command cancel requested');
  const answer: CancelAnswer = { command: commandView(command), effect };
  sendJson(ctx.res, 200, answer);
}

/** `POST /v1/commands/:commandId/cancel`. */
export async function cancelCommandRoute(ctx: RouteContext): Promise<void> {
  const id = ctx.params[0]!;
  const command = await getCommand(ctx.deps.db, id);
  if (command === null || command.ownerUserId !== ctx.caller.userId) {
    throw await commandAbsent(ctx.deps.db, id, ctx.caller.userId);
  }
  await cancelAndAnswer(ctx, command);
}

/** `POST /v1/runs/:runId/calls/:callId/cancel`. */
export async function cancelCallRoute(ctx: RouteContext): Promise<void> {
  await cancelAndAnswer(ctx, await commandOfCall(ctx, ctx.params[0]!, ctx.params[1]!));
}
