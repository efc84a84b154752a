/**
 * Dispatch over the HTTP API: one `workbenchHost` call answered whole
 * (`POST /v1/dispatch`) or with live output (`.../stream`, also the operator's build),
 * and the tool function a tool loop is given, which turns the refusals a model can fix
 * into failed results. {@link WorkbenchClient} offers these as its methods.
 *
 * @module
 */

import type { DispatchFailure, DispatchResult } from '../contract/index.js';
import { ClientError } from './client-error.js';
import type { DispatchStreamOptions, WorkbenchHostFn } from './client-options.js';
import { type ClientTransport, notShaped } from './client-transport.js';
import { isDispatchResult, readDispatchStream } from './ndjson-stream.js';
import type { DispatchRequest } from './types.js';

/**
 * Transport refusals a model can act on (fix the arguments, send less); the tool
 * loop gets these back as failed results. Others (a bad token, an unreachable node)
 * are the operator's problem and are thrown.
 */
const MODEL_FIXABLE_CODES: ReadonlySet<string> = new Set([
  'invalid_arguments',
  'payload_too_large',
]);

/** `?cancelOnDisconnect=true` when asked for. */
function cancelQuery(cancelOnDisconnect: boolean | undefined): string {
  return cancelOnDisconnect ? '?cancelOnDisconnect=true' : '';
}

/** One call answered whole. */
export async function dispatchOnce(
  http: ClientTransport,
  request: DispatchRequest,
  options: { signal?: AbortSignal; cancelOnDisconnect?: boolean },
): Promise<DispatchResult> {
  const path = `/v1/dispatch${cancelQuery(options.cancelOnDisconnect)}`;
  const body = await http.json('POST', path, {
    body: request,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (!isDispatchResult(body)) throw notShaped('/v1/dispatch', 'a dispatch result');
  return body;
}

/**
 * One call whose answer streams (`route` is the stream route's path): `onOutput` sees
 * the output as it comes, and the result arrives at the end.
 */
export async function dispatchStreamed(
  http: ClientTransport,
  route: string,
  body: unknown,
  options: DispatchStreamOptions,
): Promise<DispatchResult> {
  const path = `${route}${cancelQuery(options.cancelOnDisconnect)}`;
  const response = await http.send('POST', path, {
    body,
    raw: true,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (response.body === null) throw notShaped(path, 'a stream');
  return readDispatchStream(
    response.body as AsyncIterable<Uint8Array>,
    options.onOutput ?? (() => {}),
  );
}

/** The tool function of a tool loop, bound to one run, agent and task. */
export function toolFunction(
  dispatch: (request: DispatchRequest) => Promise<DispatchResult>,
  runId: string,
  agentId: string,
  taskId: string,
): WorkbenchHostFn {
  return async (action, args, call = {}) => {
    const request = {
      action,
      args: args as DispatchRequest['args'],
      runId,
      agentId,
      taskId,
      ...(call.callId === undefined ? {} : { callId: call.callId }),
      ...(call.environment === undefined ? {} : { environment: call.environment }),
    };
    try {
      return await dispatch(request);
    } catch (err) {
      if (err instanceof ClientError && MODEL_FIXABLE_CODES.has(err.code)) {
        const failure = {
          ok: false,
          errorCode: err.code,
          message: err.message,
          ...(err.payload === undefined ? {} : { payload: err.payload }),
        } as DispatchFailure;
        return failure;
      }
      throw err;
    }
  };
}
