/**
 * `POST /v1/dispatch` and `POST /v1/dispatch/stream`: one `workbenchHost` call with
 * the contract's envelope and result. A refused call is still a 200 carrying
 * `{ok: false, errorCode, ...}`: the result is the answer, as it is for a tool loop
 * that embeds the agent. The run must be the caller's (else `not_found`, and nothing
 * is dispatched), and the authority is always the caller's user authority.
 *
 * The stream form answers `application/x-ndjson`: `{"type":"output",...}` lines as
 * exec output arrives (data in base64), then exactly one `{"type":"result",...}`.
 * A caller that disconnects does not cancel a command its call queued: the command
 * belongs to the durable queue, and its outcome is read by command id or by repeating
 * the call with its `callId`. `?cancelOnDisconnect=true` asks for the other rule (a CLI
 * whose Ctrl-C closes the connection): then a disconnect cancels the call, as the cancel
 * routes do (`cancel-routes.ts`).
 *
 * @module
 */

import type { ServerResponse } from 'node:http';
import type { OutputSink } from '../contract/index.js';
import {
  CallerGoneError,
  type DispatchResult,
  type DispatchStreamLine,
  errorResult,
  parseEnvelope,
  resultFromError,
} from '../contract/index.js';
import { getRunForOwner } from '../store/index.js';
import type { Logger } from '../telemetry/index.js';
import type { RouteContext } from './api-deps.js';
import { invalidField } from './http-errors.js';
import { DISPATCH_BODY_LIMIT_BYTES, readJson, sendJson } from './http-io.js';
import { runMissing } from './run-calls.js';

/**
 * Aborts when the caller goes away before the answer is complete: a cancel when
 * `cancel` is set, else with a {@link CallerGoneError}, which leaves a queued command
 * to run.
 */
export function abortOnDisconnect(res: ServerResponse, cancel = false): AbortController {
  const controller = new AbortController();
  res.once('close', () => {
    if (res.writableFinished) return;
    if (cancel) controller.abort();
    else controller.abort(new CallerGoneError('the HTTP connection closed'));
  });
  return controller;
}

/** `?cancelOnDisconnect=true|false` (default false); the only parameter of the dispatch routes. */
export function cancelOnDisconnect(query: URLSearchParams): boolean {
  for (const name of query.keys()) {
    if (name !== 'cancelOnDisconnect') {
      throw invalidField(name, 'unknown parameter; expected only cancelOnDisconnect');
    }
  }
  const value = query.get('cancelOnDisconnect');
  if (value === null || value === 'false') return false;
  if (value === 'true') return true;
  throw invalidField('cancelOnDisconnect', 'expected true or false');
}

/**
 * Answers `application/x-ndjson`: an output line per chunk `work` reports, then exactly
 * one result line. The 200 goes out first, so a failure of `work` (the database, say)
 * still ends in one result line.
 */
export async function sendResultStream(
  res: ServerResponse,
  log: Logger,
  work: (onOutput: OutputSink) => Promise<DispatchResult>,
): Promise<void> {
  res.writeHead(200, {
    'content-type': 'application/x-ndjson; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  res.flushHeaders();
  const line = (value: DispatchStreamLine) => {
    if (!res.destroyed && !res.writableEnded) res.write(`${JSON.stringify(value)}\n`);
  };
  let result: DispatchResult;
  try {
    result = await work((stream, chunk) =>
      line({ type: 'output', stream, data: Buffer.from(chunk).toString('base64') }),
    );
  } catch (err) {
    result = resultFromError(err);
    if (result.errorCode === 'internal') log.error({ err }, 'stream dispatch failed');
  }
  line({ type: 'result', result });
  if (!res.destroyed) res.end();
}

/**
 * Parses the envelope (the only parse of it in this process) and checks the run's
 * owner, then dispatches the parsed envelope. Refusals that need no dispatch come
 * back as results too.
 */
async function dispatchOwned(
  ctx: RouteContext,
  body: unknown,
  options: {
    signal: AbortSignal;
    onOutput?: OutputSink;
  },
): Promise<DispatchResult> {
  const parsed = parseEnvelope(body);
  if (!parsed.ok) return parsed;
  const runId = parsed.envelope.runId;
  const run = await getRunForOwner(ctx.deps.db, runId, ctx.caller.userId);
  if (run === null) {
    return errorResult('not_found', runMissing(runId), { runId });
  }
  try {
    return (await ctx.deps.dispatcher.dispatch(parsed.envelope, ctx.caller.authority, options))
      .result;
  } catch (err) {
    ctx.log.error({ err, runId }, 'dispatch threw');
    return resultFromError(err);
  }
}

/** `POST /v1/dispatch`. */
export async function dispatchRoute(ctx: RouteContext): Promise<void> {
  const cancel = cancelOnDisconnect(ctx.query);
  const body = await readJson(ctx.req, DISPATCH_BODY_LIMIT_BYTES);
  const controller = abortOnDisconnect(ctx.res, cancel);
  const result = await dispatchOwned(ctx, body, { signal: controller.signal });
  if (!ctx.res.destroyed) sendJson(ctx.res, 200, result);
}

/** `POST /v1/dispatch/stream`. */
export async function dispatchStreamRoute(ctx: RouteContext): Promise<void> {
  const cancel = cancelOnDisconnect(ctx.query);
  const body = await readJson(ctx.req, DISPATCH_BODY_LIMIT_BYTES);
  const controller = abortOnDisconnect(ctx.res, cancel);
  await sendResultStream(ctx.res, ctx.log, (onOutput) =>
    dispatchOwned(ctx, body, { signal: controller.signal, onOutput }),
  );
}
