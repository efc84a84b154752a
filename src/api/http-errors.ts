/**
 * The HTTP converter, the one place an HTTP answer is made of a failure: a refusal's
 * status is its code's (`httpStatus` of the contract's error table), its body the
 * dispatch failure `{ok: false, errorCode, message, payload?}` the contract's
 * converter made of what was thrown. Pure; `http-io.ts` writes what it makes, and the
 * client reads it back in `client/client-error.ts`.
 *
 * A route answers another status than its code's only where HTTP names the situation
 * itself (405, 416, and 408/431 in `parse-refusal.ts`, 409 for a decided consent
 * request), through {@link ApiError}'s `status`.
 *
 * @module
 */

import {
  type DispatchFailure,
  type ErrorCode,
  httpStatusOf,
  resultFromError,
  WorkbenchError,
} from '../contract/index.js';

/** A refusal of an API request: a contract code, and the rare status HTTP names itself. */
export class ApiError extends WorkbenchError {
  /** The answer's status: the code's own unless the route named another. */
  readonly status: number;

  /**
   * @param code - the stable code callers match on; its status is the table's.
   * @param message - for people: what happened and what to do; starts with the code.
   * @param options - `payload`: structured detail for the caller; `status`: a status
   *   HTTP names for the situation (405, 416, 409), instead of the code's own.
   */
  constructor(
    code: ErrorCode,
    message: string,
    options: { readonly payload?: unknown; readonly status?: number } = {},
  ) {
    super(code, message, options.payload);
    this.name = 'ApiError';
    this.status = options.status ?? httpStatusOf(code);
  }
}

/** A 400 `invalid_arguments` naming the field that is wrong. */
export function invalidField(field: string, problem: string): ApiError {
  return new ApiError('invalid_arguments', `invalid_arguments: ${field}: ${problem}`);
}

/** What a route answers for anything it threw: a status and the refusal's body. */
export interface HttpRefusal {
  readonly status: number;
  readonly body: DispatchFailure;
}

/**
 * Anything thrown by a handler as its HTTP refusal. Foreign messages (SQL, file system,
 * object store) never reach the caller: the contract's converter replaced them (an
 * outage is `unavailable`, a bug `internal`).
 */
export function errorAnswer(err: unknown): HttpRefusal {
  const body = resultFromError(err);
  const status = err instanceof ApiError ? err.status : httpStatusOf(body.errorCode);
  return { status, body };
}

/** The headers a refusal of `status` carries besides its body's. */
export function refusalHeaders(status: number): Record<string, string> {
  if (status === 401) return { 'www-authenticate': 'Bearer' };
  // The rest of an oversize body is not read: the connection cannot carry another request.
  if (status === 413) return { connection: 'close' };
  return {};
}

/**
 * A refusal as raw HTTP/1.1 text, for a socket no `ServerResponse` writes to (an
 * upgrade, a request the server could not parse); the connection closes after it.
 */
export function rawRefusal(status: number, reason: string, body: DispatchFailure): string {
  const text = JSON.stringify(body);
  return `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`;
}
