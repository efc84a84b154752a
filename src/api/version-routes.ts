/**
 * A run's workspace history over HTTP. Each route but the fork is one `version_*` call
 * with the caller's authority (routing, ownership and audit are the dispatch path's);
 * the fork makes a run, so it is the API's, like `POST /v1/runs`:
 *
 * | route | answer |
 * |---|---|
 * | `GET /v1/runs/:runId/versions?limit=&before=&labelled=` | `{versions, current, next}`, newest first |
 * | `GET /v1/runs/:runId/versions/diff?from=&to=&limit=&after=` | `{from, to, entries, added, changed, removed, next}` |
 * | `GET /v1/runs/:runId/manifest?version=&after=&limit=` | `{version, files, next}`: a version's files, by path |
 * | `POST /v1/runs/:runId/checkpoints` `{label, version?}` | 201 `{version}` |
 * | `DELETE /v1/runs/:runId/checkpoints/:label` | `{version}`: the version it named |
 * | `POST /v1/runs/:runId/restore` `{version?, label?, callId?}` | `{version, restoredFrom, added, changed, removed}` |
 * | `POST /v1/runs/:runId/fork` `{version?, label?, conversationId?}` | 201 `{run, forkedFrom, files}` |
 *
 * Refusals are the dispatch result with its code's status (the error table's, as on
 * every route): 404 for a run that is not the caller's or a version it does not keep,
 * 409 for a label in use or a reused `callId`.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import {
  type DispatchResult,
  type ForkAnswer,
  MAX_DIFF_ENTRIES,
  MAX_ID_CHARS,
  MAX_VERSION_LABEL_CHARS,
  VERSION_LABEL_PATTERN,
} from '../contract/index.js';
import { findLabel, forkRun, getManifestHead, getVersion, manifestPage } from '../store/index.js';
import type { RouteContext } from './api-deps.js';
import { ApiError, invalidField } from './http-errors.js';
import {
  BODY_LIMIT_BYTES,
  readJsonObject,
  rejectUnknownFields,
  sendJson,
  sendRefusal,
} from './http-io.js';
import { ownRunCall } from './run-calls.js';
import { ownRun } from './run-routes.js';
import { runView } from './views.js';

/** One `version_*` call on the route's run, checked to be the caller's first. */
function versionCall(
  ctx: RouteContext,
  action: string,
  args: Record<string, unknown>,
  callId?: string,
): Promise<DispatchResult> {
  return ownRunCall(ctx, action, args, { taskId: 'versions', callId });
}

/** Answers `result`'s payload, wrapped by `wrap`, with `status`; or its refusal. */
function answer(
  ctx: RouteContext,
  result: DispatchResult,
  wrap: (payload: unknown) => unknown = (payload) => payload,
  status = 200,
): void {
  if (!result.ok) sendRefusal(ctx.res, result);
  else sendJson(ctx.res, status, wrap(result.payload));
}

/** A whole-number query parameter, absent when not given. */
function intParam(ctx: RouteContext, name: string): number | undefined {
  const raw = ctx.query.get(name);
  if (raw === null) return undefined;
  if (!/^\d{1,15}$/.test(raw)) throw invalidField(name, 'expected a whole number');
  return Number(raw);
}

/** `callId` of a body: absent, or a non-empty string. */
function callIdOf(body: Record<string, unknown>): string | undefined {
  const { callId } = body;
  if (callId === undefined) return undefined;
  if (typeof callId !== 'string' || callId === '') {
    throw invalidField('callId', 'expected a non-empty string');
  }
  return callId;
}

/** `GET /v1/runs/:runId/versions?limit=&before=&labelled=`. */
export async function listVersionsRoute(ctx: RouteContext): Promise<void> {
  const limit = intParam(ctx, 'limit');
  const before = intParam(ctx, 'before');
  const labelled = ctx.query.get('labelled');
  if (labelled !== null && labelled !== 'true' && labelled !== 'false') {
    throw invalidField('labelled', 'expected true or false');
  }
  const result = await versionCall(ctx, 'version_list', {
    ...(limit === undefined ? {} : { limit }),
    ...(before === undefined ? {} : { before }),
    labelled: labelled === 'true',
  });
  answer(ctx, result);
}

/**
 * `GET /v1/runs/:runId/manifest?version=&after=&limit=`: the files of a kept version (the
 * current one by default), by path, a page at a time, as the durable copy holds them:
 * read from the database, so a command holding the workspace does not make it wait,
 * and an ended run's files are listed as they were left.
 */
export async function manifestRoute(ctx: RouteContext): Promise<void> {
  const run = await ownRun(ctx, ctx.params[0]!);
  const asked = intParam(ctx, 'version');
  const limit = intParam(ctx, 'limit') ?? 1000;
  if (limit < 1 || limit > MAX_DIFF_ENTRIES) {
    throw invalidField('limit', `expected 1 to ${MAX_DIFF_ENTRIES}`);
  }
  const after = ctx.query.get('after') ?? undefined;
  const { db } = ctx.deps;
  const version = asked ?? (await getManifestHead(db, run.id)).version;
  if (version > 0 && (await getVersion(db, run.id, version)) === null) {
    throw new ApiError(
      'version_not_found',
      `version_not_found: run "${run.id}" keeps no version ${version}; GET /v1/runs/${run.id}/versions lists the kept ones`,
    );
  }
  const rows =
    version === 0
      ? []
      : await manifestPage(db, run.id, version, {
          limit: limit + 1,
          ...(after === undefined ? {} : { after }),
        });
  const files = rows.slice(0, limit).map((f) => ({
    path: f.path,
    size: f.size,
    sha256: f.hash,
    mode: f.mode.toString(8).padStart(3, '0'),
    mtimeMs: f.mtimeMs,
  }));
  sendJson(ctx.res, 200, {
    version,
    files,
    next: rows.length > limit ? (files.at(-1)?.path ?? null) : null,
  });
}

/** `GET /v1/runs/:runId/versions/diff?from=&to=&limit=&after=`. */
export async function diffVersionsRoute(ctx: RouteContext): Promise<void> {
  const from = intParam(ctx, 'from');
  if (from === undefined) throw invalidField('from', 'give the older version: ?from=<n>');
  const to = intParam(ctx, 'to');
  const limit = intParam(ctx, 'limit');
  const after = ctx.query.get('after');
  const result = await versionCall(ctx, 'version_diff', {
    from,
    ...(to === undefined ? {} : { to }),
    ...(limit === undefined ? {} : { limit }),
    ...(after === null ? {} : { after }),
  });
  answer(ctx, result);
}

/** `POST /v1/runs/:runId/checkpoints` `{label, version?}`. */
export async function checkpointRoute(ctx: RouteContext): Promise<void> {
  const body = await readJsonObject(ctx.req, BODY_LIMIT_BYTES);
  rejectUnknownFields(body, ['label', 'version']);
  const result = await versionCall(ctx, 'version_checkpoint', { ...body, remove: false });
  answer(ctx, result, (payload) => ({ version: (payload as { version: unknown }).version }), 201);
}

/** `DELETE /v1/runs/:runId/checkpoints/:label`. */
export async function removeCheckpointRoute(ctx: RouteContext): Promise<void> {
  const result = await versionCall(ctx, 'version_checkpoint', {
    label: ctx.params[1]!,
    remove: true,
  });
  answer(ctx, result, (payload) => ({ version: (payload as { version: unknown }).version }));
}

/** `POST /v1/runs/:runId/restore` `{version | label, callId?}`. */
export async function restoreRoute(ctx: RouteContext): Promise<void> {
  const body = await readJsonObject(ctx.req, BODY_LIMIT_BYTES);
  rejectUnknownFields(body, ['version', 'label', 'callId']);
  if ((body.version === undefined) === (body.label === undefined)) {
    throw invalidField('version', 'give the version to restore: version (a number) or label');
  }
  const to = body.version ?? body.label;
  answer(ctx, await versionCall(ctx, 'version_restore', { to }, callIdOf(body)));
}

/**
 * `POST /v1/runs/:runId/fork` `{version?, label?, conversationId?}`: a new run of the
 * caller's whose workspace starts at a version of this one (the current one when
 * neither is given). It keeps the run's network and, unless given, its conversation.
 */
export async function forkRoute(ctx: RouteContext): Promise<void> {
  const body = await readJsonObject(ctx.req, BODY_LIMIT_BYTES);
  rejectUnknownFields(body, ['version', 'label', 'conversationId']);
  const origin = await ownRun(ctx, ctx.params[0]!);
  const { version, label, conversationId } = body;
  if (version !== undefined && label !== undefined) {
    throw invalidField('label', 'give version or label, not both');
  }
  if (version !== undefined && (!Number.isSafeInteger(version) || (version as number) < 1)) {
    throw invalidField('version', 'expected a version number (1 or more)');
  }
  if (
    label !== undefined &&
    (typeof label !== 'string' ||
      label.length > MAX_VERSION_LABEL_CHARS ||
      !VERSION_LABEL_PATTERN.test(label))
  ) {
    throw invalidField('label', 'expected a checkpoint label');
  }
  if (
    conversationId !== undefined &&
    (typeof conversationId !== 'string' ||
      conversationId.length === 0 ||
      conversationId.length > MAX_ID_CHARS)
  ) {
    throw invalidField('conversationId', `expected a string of 1 to ${MAX_ID_CHARS} characters`);
  }
  const { db } = ctx.deps;
  const at =
    typeof label === 'string'
      ? await findLabel(db, origin.id, label)
      : ((version as number | undefined) ?? (await getManifestHead(db, origin.id)).version);
  const refused = () =>
    new ApiError(
      'version_not_found',
      `version_not_found: run "${origin.id}" keeps no ${typeof label === 'string' ? `version labelled "${label}"` : `version ${at ?? ''}`}; GET /v1/runs/${origin.id}/versions lists the kept ones`,
    );
  if (at === null || at < 1) throw refused();
  const forked = await forkRun(db, {
    fromRunId: origin.id,
    ownerUserId: ctx.caller.userId,
    version: at,
    fork: {
      id: ctx.deps.newRunId?.() ?? `run-${randomUUID()}`,
      ownerUserId: ctx.caller.userId,
      conversationId: typeof conversationId === 'string' ? conversationId : origin.conversationId,
      network: origin.network,
    },
  });
  if (forked.kind === 'no_run') {
    throw new ApiError('not_found', `not_found: run "${origin.id}" does not exist`);
  }
  if (forked.kind === 'no_version') throw refused();
  ctx.log.info(
    { runId: forked.run.id, forkedFrom: origin.id, version: at, files: forked.files },
    'run forked',
  );
  const answer: ForkAnswer = {
    run: runView(forked.run),
    forkedFrom: { runId: origin.id, version: at },
    files: forked.files,
  };
  sendJson(ctx.res, 201, answer);
}
