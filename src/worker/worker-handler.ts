/**
 * The worker host's answer to the calls that come down its stream: the boundary of
 * the worker process. A `worker.dispatch` request is checked (method, a user's
 * authority), its envelope parsed once, and it waits for one of the worker's slots
 * before it runs (see `worker-actions.ts`). Its answer crosses back as the workbench
 * node's do (`answerFromResult`), exec output streaming ahead of it.
 *
 * @module
 */

import { type DispatchResult, errorResult, okResult, parseEnvelope } from '../contract/index.js';
import {
  answerFromResult,
  authorityFromWire,
  type RequestHandler,
  WORKER_DISPATCH_METHOD,
} from '../mesh/index.js';
import { type CallSlots, SlotWaitAborted } from './call-slots.js';
import { serveWorkerCall, type WorkerActionDeps } from './worker-actions.js';
import { neverRanPayload } from './worker-exec.js';

/** What the handler needs: the action deps and the worker's slots. */
export interface WorkerHandlerDeps extends WorkerActionDeps {
  readonly slots: CallSlots;
}

/** The request handler of a worker host. */
export function createWorkerHandler(deps: WorkerHandlerDeps): RequestHandler {
  return async (request, ctx) => {
    if (request.method !== WORKER_DISPATCH_METHOD) {
      return answerFromResult(
        errorResult(
          'invalid_arguments',
          `invalid_arguments: unknown method ${JSON.stringify(request.method)}; a worker host serves "${WORKER_DISPATCH_METHOD}"`,
        ),
      );
    }
    if (request.authority?.class !== 'user') {
      return answerFromResult(
        errorResult(
          'forbidden',
          "forbidden: a worker host runs calls only on its user's behalf (a user-class authority); this call carries none",
        ),
      );
    }
    const authority = authorityFromWire(request.authority, false);
    if (!authority.ok) return answerFromResult(authority);
    let body: unknown;
    try {
      body = JSON.parse(request.payload.toString('utf8'));
    } catch {
      return answerFromResult(
        errorResult('invalid_arguments', 'invalid_arguments: the request payload is not JSON'),
      );
    }
    const parsed = parseEnvelope(body);
    if (!parsed.ok) return answerFromResult(parsed);
    const envelope = parsed.envelope;
    const log = deps.log.child({ requestId: request.id, runId: envelope.runId });
    let release: () => void;
    try {
      release = await deps.slots.acquire(ctx.signal);
    } catch (err) {
      if (!(err instanceof SlotWaitAborted)) throw err;
      log.info({ action: envelope.action }, 'call cancelled while it waited for a slot');
      return answerFromResult(cancelledBeforeRunning(envelope.action));
    }
    try {
      log.debug({ action: envelope.action }, 'worker call started');
      const result = await serveWorkerCall(deps, envelope, ctx);
      log.info(
        {
          action: envelope.action,
          ok: result.ok,
          ...(result.ok ? {} : { errorCode: result.errorCode }),
        },
        'worker call answered',
      );
      return answerFromResult(result);
    } finally {
      release();
    }
  };
}

/** The answer of a call cancelled before it had a slot: nothing ran. */
function cancelledBeforeRunning(action: string): DispatchResult {
  if (action === 'exec') return okResult(neverRanPayload());
  return errorResult(
    'unavailable',
    `unavailable: the call was cancelled before it started on the worker host; ${action} did not run`,
  );
}
