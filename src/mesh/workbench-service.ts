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
 * the Response's ok / error code / message and a JSON payload, by the mesh's converter
 * (`wire-errors.ts`), which rebuilds them on the agent.
 *
 * @module
 */

import { type Duplex, finished } from 'node:stream';
import {
  admitEnvelope,
  errorResult,
  okResult,
  parseEnvelope,
  USER_SUBJECT_PREFIX,
} from '../contract/index.js';
import type { Logger } from '../telemetry/index.js';
import type { DispatchTarget, PortTarget, RunReleaseTarget } from './dispatch-target.js';
import type { RequestContext, RequestHandler, ServedRequest } from './server-session.js';
import { authorityFromWire } from './wire-authority.js';
import { answerFromError, answerFromResult, type HandlerAnswer } from './wire-errors.js';

/** The method of a forwarded `workbenchHost` call. */
export const WORKBENCH_DISPATCH_METHOD = 'workbench.dispatch';

/** The method that tells a replica a run ended or was deleted; payload `{"runId": ...}`. */
export const WORKBENCH_RELEASE_RUN_METHOD = 'workbench.release_run';

/**
 * The method that opens a tunnel to a port in a run's sandbox; payload
 * `{"runId": ..., "port": n}`, authority the run's owner. Its bytes are the
 * connection's, both ways (see `tunnel.ts`); `port_not_listening` when nothing listens.
 */
export const WORKBENCH_PORT_METHOD = 'workbench.port';

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

/**
 * `workbench.port`: a connection to the port in the run's sandbox, for the run's
 * owner, joined to the request's tunnel until both directions ended or the caller
 * cancelled.
 */
async function handlePort(
  host: Partial<PortTarget>,
  request: ServedRequest,
  ctx: RequestContext,
  log: Logger,
): Promise<HandlerAnswer> {
  const authority = authorityFromWire(request.authority, request.authenticated);
  if (!authority.ok) return answerFromResult(authority);
  if (authority.authority.class !== 'user') {
    return refuse('invalid_arguments', 'invalid_arguments: a port is opened for a user');
  }
  let body: { runId?: unknown; port?: unknown } | null;
  try {
    body = JSON.parse(request.payload.toString('utf8')) as typeof body;
  } catch {
    return refuse('invalid_arguments', 'invalid_arguments: the request payload is not JSON');
  }
  const runId = body?.runId;
  const port = body?.port;
  if (
    typeof runId !== 'string' ||
    !Number.isInteger(port) ||
    (port as number) < 1 ||
    (port as number) > 65535
  ) {
    return refuse(
      'invalid_arguments',
      'invalid_arguments: expected {"runId": string, "port": 1-65535}',
    );
  }
  if (!host.openPort || !ctx.tunnel) {
    return answerFromResult(
      errorResult('no_sandbox', 'no_sandbox: this node has no sandbox whose ports it can open'),
    );
  }
  let conn: Duplex;
  try {
    conn = await host.openPort(
      runId,
      port as number,
      authority.authority.subject.slice(USER_SUBJECT_PREFIX.length),
    );
  } catch (err) {
    const answer = answerFromError(err);
    if (answer.errorCode === 'internal') log.error({ err, runId, port }, 'opening a port failed');
    return answer;
  }
  await join(conn, ctx.tunnel(), ctx.signal);
  return answerFromResult(okResult(null));
}

/** Pipes `a` and `b` into each other until both ended, either failed, or `signal` aborts. */
function join(a: Duplex, b: Duplex, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    let open = 2;
    const close = () => {
      signal.removeEventListener('abort', close);
      a.destroy();
      b.destroy();
      resolve();
    };
    if (signal.aborted) {
      close();
      return;
    }
    signal.addEventListener('abort', close, { once: true });
    const one = (err?: Error | null) => {
      open -= 1;
      if (err || open === 0) close();
    };
    finished(a, one);
    finished(b, one);
    a.pipe(b);
    b.pipe(a);
  });
}

/** The request handler of a workbench node, over its host. */
export function createWorkbenchHandler(
  host: DispatchTarget & Partial<RunReleaseTarget> & Partial<PortTarget>,
  log: Logger,
): RequestHandler {
  return async (request, ctx) => {
    if (request.method === WORKBENCH_RELEASE_RUN_METHOD) {
      return handleReleaseRun(host, request.payload);
    }
    if (request.method === WORKBENCH_PORT_METHOD) return handlePort(host, request, ctx, log);
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
