/**
 * `GET /v1/runs/:runId/commands`: a run's commands, newest first, a page at a time,
 * so a caller whose call was cut off before it learned the command id (and that sent
 * no `callId`) can find its command again. Items carry how each command ended but not
 * its output; `GET /v1/commands/:id` reads one whole, and
 * `GET /v1/runs/:runId/calls/:callId` reads the one a call with that `callId` queued.
 *
 * Paging: each answer has `nextBefore`, the id to pass as `?before=` for the next
 * (older) page, or null on the last page.
 *
 * @module
 */

import type { CommandPage } from '../contract/index.js';
import {
  type Command,
  type CommandStatus,
  getCallRecord,
  getCommand,
  getCommandByCallId,
  listRunCommands,
} from '../store/index.js';
import type { RouteContext } from './api-deps.js';
import { ApiError, invalidField } from './http-errors.js';
import { sendJson } from './http-io.js';
import { type PageQuery, parsePageQuery } from './page-query.js';
import { commandAbsent } from './read-routes.js';
import { ownRun } from './run-routes.js';
import { commandSummaryView, commandView } from './views.js';

const STATUSES = Object.keys({
  queued: true,
  running: true,
  completed: true,
  failed: true,
  timed_out: true,
  cancelled: true,
} satisfies Record<CommandStatus, true>) as CommandStatus[];

/** Reads a command list's `?status=&limit=&before=`. Pure. */
export function parseCommandListQuery(query: URLSearchParams): PageQuery<CommandStatus> {
  return parsePageQuery(query, STATUSES, 'a command');
}

/** `GET /v1/runs/:runId/commands`: `{commands, nextBefore}`; another user's run is not_found. */
export async function listRunCommandsRoute(ctx: RouteContext): Promise<void> {
  const query = parseCommandListQuery(ctx.query);
  const run = await ownRun(ctx, ctx.params[0]!);
  // One row past the page says whether another page follows.
  const rows = await listRunCommands(ctx.deps.db, run.id, { ...query, limit: query.limit + 1 });
  if (rows.length === 0 && query.before !== undefined) {
    const cursor = await getCommand(ctx.deps.db, query.before);
    if (cursor === null || cursor.runId !== run.id) {
      throw invalidField(
        'before',
        `"${query.before}" is not a command of run "${run.id}"; pass the nextBefore of the previous page`,
      );
    }
  }
  const page = rows.slice(0, query.limit);
  const answer: CommandPage = {
    commands: page.map(commandSummaryView),
    nextBefore: rows.length > query.limit ? page[page.length - 1]!.id : null,
  };
  sendJson(ctx.res, 200, answer);
}

/**
 * The command the call with key `callId` queued in the caller's run `runId`, for the
 * routes under `/v1/runs/:runId/calls/:callId`. Another user's run, or a call that queued
 * no command, is not_found; a command retention removed is command_expired, as by id.
 */
export async function commandOfCall(
  ctx: RouteContext,
  runId: string,
  callId: string,
): Promise<Command> {
  const run = await ownRun(ctx, runId);
  const command = await getCommandByCallId(ctx.deps.db, run.id, callId);
  if (command === null) {
    const record = await getCallRecord(ctx.deps.db, run.id, callId);
    if (record?.commandId) {
      throw await commandAbsent(ctx.deps.db, record.commandId, ctx.caller.userId);
    }
    throw new ApiError(
      'not_found',
      `not_found: no command was queued in run "${run.id}" with callId "${callId}"; only exec and build calls queue one (GET /v1/runs/${run.id}/commands lists the run's commands)`,
    );
  }
  return command;
}

/**
 * `GET /v1/runs/:runId/calls/:callId`: `{command}`, whole, the command the call with that
 * `callId` queued, so a caller cut off before its answer finds it again by the key it
 * chose.
 */
export async function getCallCommandRoute(ctx: RouteContext): Promise<void> {
  const command = await commandOfCall(ctx, ctx.params[0]!, ctx.params[1]!);
  sendJson(ctx.res, 200, { command: commandView(command) });
}
