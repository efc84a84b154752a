/**
 * The HTTP edges of the API: a refusal with a stable code and a status, bounded body
 * reading, and JSON answers. Every refusal is `{ok: false, errorCode, message,
 * payload?}` with a code from the contract's one list.
 *
 * @module
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ErrorCode, INTERNAL_ERROR_MESSAGE, WorkbenchError } from '../contract/index.js';
import { isObjectStoreError } from '../objects/index.js';
import { StoreError } from '../store/index.js';

/** Largest request body of `POST /v1/dispatch` (and its stream form), bytes. */
export const DISPATCH_BODY_LIMIT_BYTES = 48 * 1024 * 1024;
/** Largest request body of every other route, bytes. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** A refusal of an API request: the HTTP status and the contract code callers match on. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    /** Structured detail for the caller, sent as the refusal's `payload`. */
    readonly payload?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** A 400 `invalid_arguments` naming the field that is wrong. */
export function invalidField(field: string, problem: string): ApiError {
  return new ApiError(400, 'invalid_arguments', `invalid_arguments: ${field}: ${problem}`);
}

/** Writes a JSON answer. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}

/**
 * Turns anything thrown by a handler into a status and a refusal body. Foreign
 * messages (SQL, file system, object store) never reach the caller: they describe the
 * node, so they are logged and replaced (see `resultFromError`).
 */
export function errorAnswer(err: unknown): {
  status: number;
  code: ErrorCode;
  message: string;
  payload?: unknown;
} {
  if (err instanceof ApiError) {
    return {
      status: err.status,
      code: err.code,
      message: err.message,
      ...(err.payload === undefined ? {} : { payload: err.payload }),
    };
  }
  if (err instanceof WorkbenchError) {
    const status = err.code === 'not_found' ? 404 : err.code === 'unavailable' ? 503 : 400;
    return { status, code: err.code, message: err.message };
  }
  if (err instanceof StoreError && err.code === 'unavailable') {
    return {
      status: 503,
      code: 'unavailable',
      message: 'unavailable: the database is unreachable; retry shortly',
    };
  }
  if (isObjectStoreError(err) && err.code === 'object_store_unavailable') {
    return {
      status: 503,
      code: 'unavailable',
      message: 'unavailable: the object store is unreachable; retry shortly',
    };
  }
  return { status: 500, code: 'internal', message: INTERNAL_ERROR_MESSAGE };
}

/** Writes a refusal, unless the answer already started (then the connection is cut). */
export function sendError(res: ServerResponse, err: unknown): void {
  const { status, code, message, payload } = errorAnswer(err);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (status === 401) res.setHeader('www-authenticate', 'Bearer');
  if (status === 413) res.setHeader('connection', 'close');
  sendJson(res, status, {
    ok: false,
    errorCode: code,
    message,
    ...(payload === undefined ? {} : { payload }),
  });
}

function tooLarge(limit: number): ApiError {
  return new ApiError(
    413,
    'payload_too_large',
    `payload_too_large: the request body is over the ${limit}-byte limit of this route`,
  );
}

/**
 * Reads the whole body, refusing more than `limit` bytes with `payload_too_large`. A
 * declared length over the limit is refused before reading; an undeclared one is cut
 * when it passes the limit. The rest of an oversize body is drained, not buffered, so
 * the refusal reaches the caller.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw tooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      req.resume();
      throw tooLarge(limit);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * Reads a JSON body. An empty body is `emptyAs` (for routes whose fields are all
 * optional); malformed JSON is `invalid_arguments` naming `body`.
 */
export async function readJson(
  req: IncomingMessage,
  limit: number,
  emptyAs?: unknown,
): Promise<unknown> {
  const bytes = await readBody(req, limit);
  if (bytes.length === 0 && emptyAs !== undefined) return emptyAs;
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw invalidField('body', 'not valid JSON');
  }
}

/** A JSON body that must be an object; anything else names `body`. */
export async function readJsonObject(
  req: IncomingMessage,
  limit: number,
): Promise<Record<string, unknown>> {
  const value = await readJson(req, limit, {});
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidField('body', 'expected a JSON object');
  }
  return value as Record<string, unknown>;
}

/** Refuses fields other than `allowed`, naming the first unknown one. */
export function rejectUnknownFields(body: Record<string, unknown>, allowed: string[]): void {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) {
      throw invalidField(key, `unknown field; expected only ${allowed.join(', ')}`);
    }
  }
}
