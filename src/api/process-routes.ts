/**
 * A run's background processes over HTTP, each route one or more `process_*` calls with
 * the caller's authority (routing, ownership, limits and audit are the dispatch path's):
 *
 * | route | answer |
 * |---|---|
 * | `POST /v1/runs/:runId/processes` `{command, cwd?, env?, pty?: {cols, rows}, callId?}` | 201 `{process}` (200 when the `callId` replays) |
 * | `GET /v1/runs/:runId/processes?running=&limit=` | `{processes}`, newest first |
 * | `GET /v1/runs/:runId/processes/:processId` | `{process}` |
 * | `GET …/:processId/output?stream=&offset=&maxBytes=&encoding=` | the `process_output` answer |
 * | `GET …/:processId/output?follow=true&stdoutOffset=&stderrOffset=` | NDJSON: `{type:"output",stream,offset,data}` lines (base64) as output comes, then one `{type:"end",process}` |
 * | `POST …/:processId/stdin` `{stdin?, eof?}` | `{processId, written, eof}` |
 * | `POST …/:processId/signal` `{signal?}` | `{process}` |
 * | `POST …/:processId/wait` `{timeoutMs?}` | `{process}`, ended or not |
 * | `POST …/:processId/resize` `{cols, rows}` | `{process}` |
 * | `POST /v1/runs/:runId/shell` `{cols, rows, cwd?}` | 201 `{process}`: a login shell on a terminal, person tokens only |
 *
 * Following re-attaches anywhere: give the offsets the last line reached. Refusals are
 * the dispatch result with its code's status (the error table's, as on every route):
 * 404 for a run or process that is not the caller's, 409 for a process that ended, a
 * full cap or a reused `callId`, 413 for a size limit, 503 when the workbench or a
 * store it needs is unreachable.
 *
 * @module
 */

import {
  type DispatchFailure,
  type DispatchResult,
  MAX_PROCESS_READ_BYTES,
  type ProcessOutputPayload,
  type ProcessView,
  parseEnvelope,
  resultFromError,
  systemAuthority,
} from '../contract/index.js';
import type { RouteContext } from './api-deps.js';
import { requirePerson } from './auth.js';
import { invalidField } from './http-errors.js';
import {
  BODY_LIMIT_BYTES,
  DISPATCH_BODY_LIMIT_BYTES,
  readJsonObject,
  rejectUnknownFields,
  sendJson,
  sendRefusal,
} from './http-io.js';
import { call, callerGone, ownRunCall, requireOwnRun } from './run-calls.js';

function refuse(ctx: RouteContext, result: DispatchFailure): void {
  sendRefusal(ctx.res, result);
}

/** One `process_*` call on the route's run, whose owner the caller was checked to be. */
function dispatchProcess(
  ctx: RouteContext,
  action: string,
  args: Record<string, unknown>,
  extra: { callId?: string; signal?: AbortSignal } = {},
): Promise<DispatchResult> {
  const runId = ctx.params[0]!;
  return call(
    ctx,
    { runId, action, args, ...(extra.callId !== undefined ? { callId: extra.callId } : {}) },
    extra.signal ?? callerGone(ctx),
    'processes',
  );
}

/** One `process_*` call on the route's run, checked to be the caller's first. */
function processCall(
  ctx: RouteContext,
  action: string,
  args: Record<string, unknown>,
  extra: { callId?: string; signal?: AbortSignal } = {},
): Promise<DispatchResult> {
  return ownRunCall(ctx, action, args, { taskId: 'processes', ...extra });
}

/** Answers `result`'s payload (`wrap` names it) with `status`, or its refusal. */
function answer(
  ctx: RouteContext,
  result: DispatchResult,
  wrap: (payload: unknown) => unknown,
  status = 200,
): void {
  if (!result.ok) refuse(ctx, result);
  else sendJson(ctx.res, status, wrap(result.payload));
}

function intParam(ctx: RouteContext, name: string): number | undefined {
  const raw = ctx.query.get(name);
  if (raw === null) return undefined;
  if (!/^\d{1,15}$/.test(raw)) throw invalidField(name, 'expected a whole number of 0 or more');
  return Number(raw);
}

function boolParam(ctx: RouteContext, name: string): boolean {
  const raw = ctx.query.get(name);
  if (raw === null || raw === 'false') return false;
  if (raw === 'true') return true;
  throw invalidField(name, 'expected true or false');
}

/** `POST /v1/runs/:runId/processes`. */
export async function startProcessRoute(ctx: RouteContext): Promise<void> {
  const body = await readJsonObject(ctx.req, DISPATCH_BODY_LIMIT_BYTES);
  rejectUnknownFields(body, ['command', 'cwd', 'env', 'pty', 'callId']);
  const { callId, ...args } = body;
  if (callId !== undefined && (typeof callId !== 'string' || callId === '')) {
    throw invalidField('callId', 'expected a non-empty string');
  }
  const result = await processCall(ctx, 'process_start', args, {
    ...(typeof callId === 'string' ? { callId } : {}),
  });
  const replayed = result.ok && (result.payload as { replayed?: boolean }).replayed === true;
  answer(ctx, result, (process) => ({ process }), replayed ? 200 : 201);
}

/** `GET /v1/runs/:runId/processes?running=&limit=`. */
export async function listProcessesRoute(ctx: RouteContext): Promise<void> {
  const limit = intParam(ctx, 'limit');
  const result = await processCall(ctx, 'process_list', {
    running: boolParam(ctx, 'running'),
    ...(limit !== undefined ? { limit } : {}),
  });
  answer(ctx, result, (payload) => payload);
}

/** `GET /v1/runs/:runId/processes/:processId`. */
export async function getProcessRoute(ctx: RouteContext): Promise<void> {
  const result = await processCall(ctx, 'process_wait', {
    processId: ctx.params[1]!,
    timeoutMs: 0,
  });
  answer(ctx, result, (process) => ({ process }));
}

/** `GET /v1/runs/:runId/processes/:processId/output`: a piece, or the live follow. */
export async function processOutputRoute(ctx: RouteContext): Promise<void> {
  const processId = ctx.params[1]!;
  if (boolParam(ctx, 'follow')) return follow(ctx, processId);
  const offset = intParam(ctx, 'offset');
  const maxBytes = intParam(ctx, 'maxBytes');
  const stream = ctx.query.get('stream');
  const encoding = ctx.query.get('encoding');
  const result = await processCall(ctx, 'process_output', {
    processId,
    ...(stream !== null ? { stream } : {}),
    ...(offset !== undefined ? { offset } : {}),
    ...(maxBytes !== undefined ? { maxBytes } : {}),
    ...(encoding !== null ? { encoding } : {}),
  });
  answer(ctx, result, (payload) => payload);
}

/** How long one wait of a follow lasts before it reads again, ms. */
const FOLLOW_WAIT_MS = 200;

/**
 * Streams both streams from the given offsets as output comes, then the process's end.
 * The first read's refusal is the answer's status; later ones end the stream with an
 * `error` line.
 */
async function follow(ctx: RouteContext, processId: string): Promise<void> {
  const offsets = {
    stdout: intParam(ctx, 'stdoutOffset') ?? 0,
    stderr: intParam(ctx, 'stderrOffset') ?? 0,
  };
  // The run's owner is checked once; the reads and waits that follow are of the same run.
  await requireOwnRun(ctx, ctx.params[0]!);
  const signal = callerGone(ctx);
  const read = (stream: 'stdout' | 'stderr') =>
    dispatchProcess(
      ctx,
      'process_output',
      {
        processId,
        stream,
        offset: offsets[stream],
        maxBytes: MAX_PROCESS_READ_BYTES,
        encoding: 'base64',
      },
      { signal },
    );
  const line = (value: unknown) => {
    if (!ctx.res.destroyed && !ctx.res.writableEnded) ctx.res.write(`${JSON.stringify(value)}\n`);
  };
  let started = false;
  while (!signal.aborted) {
    let complete = true;
    let moved = false;
    for (const stream of ['stdout', 'stderr'] as const) {
      const result = await read(stream);
      if (!result.ok) {
        if (!started) return refuse(ctx, result);
        line({ type: 'error', errorCode: result.errorCode, message: result.message });
        ctx.res.end();
        return;
      }
      if (!started) {
        started = true;
        ctx.res.writeHead(200, {
          'content-type': 'application/x-ndjson; charset=utf-8',
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
        });
        ctx.res.flushHeaders();
      }
      const piece = result.payload as ProcessOutputPayload;
      if (piece.data.length > 0) {
        line({ type: 'output', stream, offset: piece.offset, data: piece.data });
        moved = true;
      }
      offsets[stream] = piece.next;
      complete &&= piece.complete;
    }
    if (complete) {
      const ended = await dispatchProcess(
        ctx,
        'process_wait',
        { processId, timeoutMs: 0 },
        { signal },
      );
      line(
        ended.ok
          ? { type: 'end', process: ended.payload as ProcessView }
          : { type: 'error', errorCode: ended.errorCode, message: ended.message },
      );
      ctx.res.end();
      return;
    }
    // Nothing new: wait on the process (its end ends the wait early) before reading again.
    if (!moved) {
      await dispatchProcess(
        ctx,
        'process_wait',
        { processId, timeoutMs: FOLLOW_WAIT_MS },
        { signal },
      );
    }
  }
}

/** `POST /v1/runs/:runId/processes/:processId/stdin`. */
export async function processStdinRoute(ctx: RouteContext): Promise<void> {
  const body = await readJsonObject(ctx.req, DISPATCH_BODY_LIMIT_BYTES);
  rejectUnknownFields(body, ['stdin', 'eof']);
  const result = await processCall(ctx, 'process_write', { processId: ctx.params[1]!, ...body });
  answer(ctx, result, (payload) => payload);
}

/** `POST /v1/runs/:runId/processes/:processId/signal`. */
export async function processSignalRoute(ctx: RouteContext): Promise<void> {
  const body = await readJsonObject(ctx.req, BODY_LIMIT_BYTES);
  rejectUnknownFields(body, ['signal']);
  const result = await processCall(ctx, 'process_signal', { processId: ctx.params[1]!, ...body });
  answer(ctx, result, (process) => ({ process }));
}

/** `POST /v1/runs/:runId/processes/:processId/resize`. */
export async function processResizeRoute(ctx: RouteContext): Promise<void> {
  const body = await readJsonObject(ctx.req, BODY_LIMIT_BYTES);
  rejectUnknownFields(body, ['cols', 'rows']);
  const result = await processCall(ctx, 'process_resize', { processId: ctx.params[1]!, ...body });
  answer(ctx, result, (process) => ({ process }));
}

/** The principal a person's terminal is opened under (see {@link shellRoute}). */
export const SHELL_SUBJECT = 'system:shell';

/**
 * `POST /v1/runs/:runId/shell` `{cols, rows, cwd?}`: a login shell on a terminal in the
 * run's sandbox, for a person only (403 `person_required` for an agent token, before
 * anything is read). The shell is `process_shell`, a system-only action, so no tool
 * loop reaches it through dispatch; it is driven with the process routes after.
 */
export async function shellRoute(ctx: RouteContext): Promise<void> {
  requirePerson(ctx.caller, "opening a terminal in a run's sandbox");
  const body = await readJsonObject(ctx.req, BODY_LIMIT_BYTES);
  rejectUnknownFields(body, ['cols', 'rows', 'cwd']);
  const runId = ctx.params[0]!;
  await requireOwnRun(ctx, runId);
  const parsed = parseEnvelope({
    runId,
    action: 'process_shell',
    args: body,
    agentId: ctx.query.get('agentId') ?? 'api',
    taskId: ctx.query.get('taskId') ?? 'shell',
  });
  if (!parsed.ok) return refuse(ctx, parsed);
  let result: DispatchResult;
  try {
    result = (
      await ctx.deps.dispatcher.dispatch(parsed.envelope, systemAuthority(SHELL_SUBJECT), {
        signal: callerGone(ctx),
      })
    ).result;
  } catch (err) {
    ctx.log.error({ err, runId }, 'shell dispatch threw');
    result = resultFromError(err);
  }
  if (result.ok) ctx.log.info({ runId, userId: ctx.caller.userId }, 'terminal opened');
  answer(ctx, result, (process) => ({ process }), 201);
}

/** `POST /v1/runs/:runId/processes/:processId/wait`. */
export async function processWaitRoute(ctx: RouteContext): Promise<void> {
  const body = await readJsonObject(ctx.req, BODY_LIMIT_BYTES);
  rejectUnknownFields(body, ['timeoutMs']);
  const result = await processCall(ctx, 'process_wait', { processId: ctx.params[1]!, ...body });
  answer(ctx, result, (process) => ({ process }));
}
