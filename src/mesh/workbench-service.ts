/**
 * The workbench node's answer to forwarded calls: the boundary of the workbench
 * process. Besides calls (`workbench.dispatch`) it answers `workbench.release_run`,
 * which an agent node sends every replica it reaches once it ended or deleted a run:
 * the node lets go of the run's warm sandbox, copy and stages before it answers, if
 * the run's row says it is over (see {@link handleReleaseRun}). A `workbench.dispatch` request's envelope is parsed here, once, and
 * admitted (hint and authority) as the agent admitted it, then runs through the same
 * `handleDispatch` as the local path, with the authority re-derived from the wire
 * (see `wire-authority.ts`), exec output streamed as Output
 * frames, and cancels turned into the call's AbortSignal. Results cross the wire as
 * the Response's ok / error code / message and a JSON payload, and are rebuilt on
 * the agent by {@link resultFromResponse}.
 *
 * @module
 */

import {
  admitEnvelope,
  type DispatchResult,
  errorResult,
  INTERNAL_ERROR_MESSAGE,
  isErrorCode,
  okResult,
  parseEnvelope,
} from '../contract/index.js';
import type { Logger } from '../telemetry/logger.js';
import type { DispatchTarget, RunReleaseTarget } from './dispatch-target.js';
import type { ResponseFrame } from './frames.js';
import type { HandlerAnswer, RequestHandler } from './server-session.js';
import { authorityFromWire } from './wire-authority.js';

/** The method of a forwarded `workbenchHost` call. */
export const WORKBENCH_DISPATCH_METHOD = 'workbench.dispatch';

/** The method that tells a replica a run ended or was deleted; payload `{"runId": ...}`. */
export const WORKBENCH_RELEASE_RUN_METHOD = 'workbench.release_run';

/** A dispatch result as a handler answer. */
export function answerFromResult(result: DispatchResult): HandlerAnswer {
  if (result.ok) {
    return { ok: true, payload: jsonBytes(result.payload) };
  }
  return {
    ok: false,
    errorCode: result.errorCode,
    message: result.message,
    payload: result.payload === undefined ? Buffer.alloc(0) : jsonBytes(result.payload),
  };
}

/** A Response frame back as a dispatch result. Unknown codes and bad JSON are `internal`. */
export function resultFromResponse(frame: ResponseFrame): DispatchResult {
  let payload: unknown;
  if (frame.payload.length > 0) {
    try {
      payload = JSON.parse(frame.payload.toString('utf8'));
    } catch {
      return errorResult('internal', INTERNAL_ERROR_MESSAGE);
    }
  }
  if (frame.ok) return okResult(payload ?? null);
  if (!isErrorCode(frame.errorCode)) return errorResult('internal', INTERNAL_ERROR_MESSAGE);
  return errorResult(frame.errorCode, frame.message, payload);
}

function jsonBytes(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value ?? null), 'utf8');
}

function refuse(code: 'invalid_arguments', message: string): HandlerAnswer {
  return answerFromResult(errorResult(code, message));
}

/**
 * `workbench.release_run`: the payload names a run; the host checks the run's row
 * itself, so the request needs no authority: it can only hasten what the sweep does.
 */
async function handleReleaseRun(
  host: Partial<RunReleaseTarget>,
  payload: Buffer,
): Promise<HandlerAnswer> {
  let body: unknown;
  try {
    body = JSON.parse(payload.toString('utf8'));
  } catch {
    return refuse('invalid_arguments', 'invalid_arguments: the request payload is not JSON');
  }
  const runId = (body as { runId?: unknown } | null)?.runId;
  if (typeof runId !== 'string') {
    return refuse('invalid_arguments', 'invalid_arguments: runId: expected the run id');
  }
  if (!host.releaseRun) {
    return answerFromResult(okResult({ released: false, afterRunning: false }));
  }
  return answerFromResult(okResult(await host.releaseRun(runId)));
}

/** The request handler of a workbench node, over its host. */
export function createWorkbenchHandler(
  host: DispatchTarget & Partial<RunReleaseTarget>,
  log: Logger,
): RequestHandler {
  return async (request, ctx) => {
    if (request.method === WORKBENCH_RELEASE_RUN_METHOD) {
      return handleReleaseRun(host, request.payload);
    }
    if (request.method !== WORKBENCH_DISPATCH_METHOD) {
      return refuse(
        'invalid_arguments',
        `invalid_arguments: unknown method ${JSON.stringify(request.method)}; this node serves "${WORKBENCH_DISPATCH_METHOD}"`,
      );
    }
    const authority = authorityFromWire(request.authority, request.authenticated);
    if (!authority.ok) return answerFromResult(authority);
    let body: unknown;
    try {
      body = JSON.parse(request.payload.toString('utf8'));
    } catch {
      return refuse('invalid_arguments', 'invalid_arguments: the request payload is not JSON');
    }
    const parsed = parseEnvelope(body);
    if (!parsed.ok) return answerFromResult(parsed);
    const refused = admitEnvelope(parsed.envelope, authority.authority);
    if (refused) return answerFromResult(refused);
    const result = await host.handleDispatch(parsed.envelope, authority.authority, {
      signal: ctx.signal,
      onOutput: (stream, chunk) => ctx.output(stream, chunk),
    });
    if (!result.ok) {
      log.debug({ requestId: request.id, errorCode: result.errorCode }, 'forwarded call refused');
    }
    return answerFromResult(result);
  };
}
