/**
 * Runs: create (the caller owns it, with the network it may have), read, end with a
 * terminal status (which releases the workspace), delete (which removes its data and
 * its artifacts). Changing a run's network later is `network-routes.ts`.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import {
  type DeletedCounts,
  type EndRunAnswer,
  MAX_ID_CHARS,
  type RunPage,
} from '../contract/index.js';
import {
  createRun,
  getRunForOwner,
  isTerminalRunStatus,
  listRunsForOwner,
  type Run,
  type RunStatus,
  StoreError,
  TERMINAL_RUN_STATUSES,
} from '../store/index.js';
import { deleteRunData, endRun } from '../workbench/index.js';
import type { RouteContext } from './api-deps.js';
import { ApiError, invalidField } from './http-errors.js';
import { BODY_LIMIT_BYTES, readJsonObject, rejectUnknownFields, sendJson } from './http-io.js';
import { auditNetwork, checkedNetwork } from './network-routes.js';
import { parsePageQuery } from './page-query.js';
import { runView } from './views.js';

/** Longest retention a run may ask for: ten years, in ms. */
const MAX_RETENTION_MS = 10 * 365 * 24 * 3600 * 1000;

/** The caller's run, or a 404 that reads the same for absent and for another user's. */
export async function ownRun(ctx: RouteContext, runId: string): Promise<Run> {
  const run = await getRunForOwner(ctx.deps.db, runId, ctx.caller.userId);
  if (run === null) {
    throw new ApiError('not_found', `not_found: run "${runId}" does not exist`);
  }
  return run;
}

/**
 * `POST /v1/runs` `{conversationId?, retentionMs?, network?: {allow, secrets?}}`. A run
 * given no network has none; one given rules outside the operator's ceiling is not made.
 */
export async function createRunRoute(ctx: RouteContext): Promise<void> {
  const body = await readJsonObject(ctx.req, BODY_LIMIT_BYTES);
  rejectUnknownFields(body, ['conversationId', 'retentionMs', 'network']);
  const { conversationId, retentionMs } = body;
  if (
    conversationId !== undefined &&
    (typeof conversationId !== 'string' ||
      conversationId.length === 0 ||
      conversationId.length > MAX_ID_CHARS)
  ) {
    throw invalidField('conversationId', `expected a string of 1 to ${MAX_ID_CHARS} characters`);
  }
  if (
    retentionMs !== undefined &&
    (typeof retentionMs !== 'number' ||
      !Number.isSafeInteger(retentionMs) ||
      retentionMs <= 0 ||
      retentionMs > MAX_RETENTION_MS)
  ) {
    throw invalidField(
      'retentionMs',
      `expected a positive integer of ms, at most ${MAX_RETENTION_MS}`,
    );
  }
  const network =
    body.network === undefined ? null : checkedNetwork(ctx, body.network, 'network').network;
  const run = await ctx.deps.db.transaction(async (tx) => {
    const created = await createRun(tx, {
      id: ctx.deps.newRunId?.() ?? `run-${randomUUID()}`,
      ownerUserId: ctx.caller.userId,
      conversationId: conversationId ?? null,
      retentionExpiresAt: retentionMs === undefined ? null : new Date(Date.now() + retentionMs),
      ...(network === null ? {} : { network }),
    });
    if (network !== null) await auditNetwork(tx, ctx, created.id, network, 'created');
    return created;
  });
  ctx.log.info({ runId: run.id, userId: run.ownerUserId }, 'run created');
  sendJson(ctx.res, 201, { run: runView(run) });
}

const RUN_STATUSES: readonly RunStatus[] = ['running', ...TERMINAL_RUN_STATUSES];

/**
 * `GET /v1/runs?status=&limit=&before=`: the caller's runs, newest first, a page at a
 * time (`nextBefore` is the id to pass as `before` for the next page, null on the last).
 * Only the caller's own runs are ever listed.
 */
export async function listRunsRoute(ctx: RouteContext): Promise<void> {
  const query = parsePageQuery(ctx.query, RUN_STATUSES, 'a run');
  if (
    query.before !== undefined &&
    (await getRunForOwner(ctx.deps.db, query.before, ctx.caller.userId)) === null
  ) {
    throw invalidField(
      'before',
      `"${query.before}" is not one of your runs; pass the nextBefore of the previous page`,
    );
  }
  const rows = await listRunsForOwner(ctx.deps.db, ctx.caller.userId, {
    ...query,
    limit: query.limit + 1,
  });
  const page = rows.slice(0, query.limit);
  const answer: RunPage = {
    runs: page.map(runView),
    nextBefore: rows.length > query.limit ? page[page.length - 1]!.id : null,
  };
  sendJson(ctx.res, 200, answer);
}

/** `GET /v1/runs/:runId`. */
export async function getRunRoute(ctx: RouteContext): Promise<void> {
  sendJson(ctx.res, 200, { run: runView(await ownRun(ctx, ctx.params[0]!)) });
}

/**
 * `POST /v1/runs/:runId/end`. Repeating the same status answers the run again with
 * `released: false`; a different terminal status than the recorded one is a 409
 * `run_ended` (the run already ended; nothing changes).
 */
export async function endRunRoute(ctx: RouteContext): Promise<void> {
  const body = await readJsonObject(ctx.req, BODY_LIMIT_BYTES);
  rejectUnknownFields(body, ['status']);
  const status = body.status;
  if (typeof status !== 'string' || !isTerminalRunStatus(status)) {
    throw invalidField('status', `expected one of ${TERMINAL_RUN_STATUSES.join(', ')}`);
  }
  const run = await ownRun(ctx, ctx.params[0]!);
  try {
    const ended = await endRun(
      {
        db: ctx.deps.db,
        log: ctx.log,
        ...(ctx.deps.workbenchRoot ? { workbenchRoot: ctx.deps.workbenchRoot } : {}),
      },
      run.id,
      status,
    );
    await letGo(ctx, run.id);
    const answer: EndRunAnswer = { run: runView(ended.run), released: ended.released !== null };
    sendJson(ctx.res, 200, answer);
  } catch (err) {
    if (err instanceof StoreError && err.code === 'conflict') {
      throw new ApiError('run_ended', `run_ended: ${err.message}`);
    }
    throw err;
  }
}

/** `DELETE /v1/runs/:runId`: the run's files, commands, workspaces and artifacts. */
export async function deleteRunRoute(ctx: RouteContext): Promise<void> {
  const run = await ownRun(ctx, ctx.params[0]!);
  const deleted: DeletedCounts = await deleteRunData(
    {
      db: ctx.deps.db,
      objects: ctx.deps.objects,
      log: ctx.log,
      ...(ctx.deps.workbenchRoot ? { workbenchRoot: ctx.deps.workbenchRoot } : {}),
    },
    run.id,
  );
  await letGo(ctx, run.id);
  sendJson(ctx.res, 200, { deleted });
}

/**
 * After a run's end or deletion: what workbench nodes keep of it goes before the
 * answer. A failure here changes nothing of the answer (the run did end); the nodes'
 * sweeps let go of what is left.
 */
async function letGo(ctx: RouteContext, runId: string): Promise<void> {
  try {
    await ctx.deps.releaseRun?.(runId);
  } catch (err) {
    ctx.log.warn({ err, runId }, 'letting go of an ended run failed; the sweep will');
  }
}
