/**
 * The error every client method throws: the client's side of the HTTP converter
 * (`api/http-errors.ts` makes the answers this reads back), and of connection failures.
 *
 * Callers match on `code`: the server's `errorCode` when it sent one, otherwise the
 * code the HTTP status stands for in the contract's error table, and `unavailable`
 * when the server could not be reached at all. A dispatch that the server answered
 * with `{ok: false}` is not an error here: it is an ordinary result (see
 * `DispatchResult`).
 *
 * @module
 */

import { codeForHttpStatus, type ErrorCode } from '../contract/index.js';

/** A code a {@link ClientError} carries: a contract code, or one the server invented later. */
export type ClientErrorCode = ErrorCode | (string & {});

/** A failed API call: what the server (or the network) said, with a stable code. */
export class ClientError extends Error {
  override readonly name = 'ClientError';

  constructor(
    /** The server's `errorCode`, or `unavailable` when it could not be reached. */
    readonly code: ClientErrorCode,
    /** What happened, for people; the server's message when it sent one. */
    message: string,
    /** The HTTP status, or null when no answer arrived. */
    readonly status: number | null = null,
    /** The server's structured detail, when it sent one. */
    readonly payload?: unknown,
  ) {
    super(message);
  }
}

/**
 * The code assumed for an error answer without a readable `errorCode` (a proxy's page,
 * an empty body): the one the status stands for in the contract's error table.
 */
export function codeForStatus(status: number): ErrorCode {
  return codeForHttpStatus(status);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The error for a non-2xx answer, from its status and body text. A body in the API's
 * error shape (`{ok: false, errorCode, message, payload?}`) gives the code and message;
 * anything else (a proxy's HTML page, an empty body) falls back to the status.
 */
export function errorFromResponse(status: number, bodyText: string): ClientError {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    body = undefined;
  }
  if (isRecord(body) && typeof body.errorCode === 'string' && body.errorCode !== '') {
    const message =
      typeof body.message === 'string' && body.message !== '' ? body.message : body.errorCode;
    return new ClientError(body.errorCode, message, status, body.payload);
  }
  const code = codeForStatus(status);
  const snippet = bodyText.trim().slice(0, 200);
  return new ClientError(
    code,
    `${code}: HTTP ${status}${snippet === '' ? '' : `: ${snippet}`}`,
    status,
  );
}

/** Whether `err` is the rejection of an aborted request (the caller's own signal). */
export function isAbortError(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError');
}

/**
 * The error for a request that got no answer: `unavailable`, naming the address and
 * the low-level reason (`ECONNREFUSED`, `ENOTFOUND`, ...) so the fix is obvious.
 */
export function unreachableError(url: string, err: unknown): ClientError {
  const cause = err instanceof Error && isRecord(err.cause) ? err.cause : undefined;
  const reason =
    (cause && typeof cause.code === 'string' && cause.code) ||
    (cause && typeof cause.message === 'string' && cause.message) ||
    (err instanceof Error ? err.message : String(err));
  return new ClientError(
    'unavailable',
    `unavailable: cannot reach ${url} (${reason}); is the node running at that address?`,
  );
}
