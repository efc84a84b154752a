/**
 * `GET /v1/runs/:runId/commands`: a run's commands, newest first, a page at a time,
 * so a caller whose call was cut off before it learned the command id (and that sent
 * no `callId`) can find its command again. Items carry how each command ended but not
 * its output; `GET /v1/commands/:id` reads one whole.
 *
 * Paging: each answer has `nextBefore`, the id to pass as `?before=` for the next
 * (older) page, or null on the last page.
 *
 * @module
 */

import { MAX_ID_CHARS } from '../contract/index.js';
import { type CommandStatus, getCommand, listRunCommands } from '../store/index.js';
import type { RouteContext } from './api-deps.js';
import { invalidField, sendJson } from './http-io.js';
import { ownRun } from './run-routes.js';
import { commandSummaryView } from './views.js';

/** Commands per page when `limit` is not given. */
export const COMMAND_PAGE_DEFAULT = 50;
/** The largest `limit` a caller may ask for. */
export const COMMAND_PAGE_MAX = 500;

const STATUSES = Object.keys({
  queued: true,
  running: true,
  completed: true,
  failed: true,
  timed_out: true,
  cancelled: true,
} satisfies Record<CommandStatus, true>) as CommandStatus[];

/** A parsed command list query. */
export interface CommandListQuery {
  /** Only commands in this status. */
  readonly status?: CommandStatus;
  /** Page size, 1 to {@link COMMAND_PAGE_MAX}. */
  readonly limit: number;
  /** Only commands older than this one (the previous page's `nextBefore`). */
  readonly before?: string;
}

function single(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length > 1) throw invalidField(name, 'given more than once');
  return values[0];
}

/** Reads `?status=&limit=&before=`; a bad value is `invalid_arguments` naming it. Pure. */
export function parseCommandListQuery(query: URLSearchParams): CommandListQuery {
  const status = single(query, 'status');
  if (status !== undefined && !(STATUSES as string[]).includes(status)) {
    throw invalidField('status', `expected one of ${STATUSES.join(', ')}`);
  }
  const limitText = single(query, 'limit');
  let limit = COMMAND_PAGE_DEFAULT;
  if (limitText !== undefined) {
    limit = /^[1-9]\d{0,3}$/.test(limitText) ? Number(limitText) : Number.NaN;
    if (!(limit <= COMMAND_PAGE_MAX)) {
      throw invalidField('limit', `expected an integer from 1 to ${COMMAND_PAGE_MAX}`);
    }
  }
  const before = single(query, 'before');
  if (before !== undefined && (before.length === 0 || before.length > MAX_ID_CHARS)) {
    throw invalidField('before', `expected a command id of 1 to ${MAX_ID_CHARS} characters`);
  }
  return {
    ...(status === undefined ? {} : { status: status as CommandStatus }),
    limit,
    ...(before === undefined ? {} : { before }),
  };
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
  sendJson(ctx.res, 200, {
    commands: page.map(commandSummaryView),
    nextBefore: rows.length > query.limit ? page[page.length - 1]!.id : null,
  });
}
