/**
 * The HTTP edges of the API: bounded body reading, JSON answers, and refusals written
 * as the converter (`http-errors.ts`) makes them.
 *
 * @module
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { type DispatchFailure, httpStatusOf } from '../contract/index.js';
import { ApiError, errorAnswer, invalidField, refusalHeaders } from './http-errors.js';

/** Largest request body of `POST /v1/dispatch` (and its stream form), bytes. */
export const DISPATCH_BODY_LIMIT_BYTES = 48 * 1024 * 1024;
/** Largest request body of every other route, bytes. */
export const BODY_LIMIT_BYTES = 64 * 1024;

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
 * Writes a refused call's failure (a dispatch result) with its code's status, unless
 * the answer already started (then the connection is cut). `status` is for the routes
 * that name one of HTTP's own.
 */
export function sendRefusal(res: ServerResponse, failure: DispatchFailure, status?: number): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const answered = status ?? httpStatusOf(failure.errorCode);
  for (const [name, value] of Object.entries(refusalHeaders(answered))) res.setHeader(name, value);
  sendJson(res, answered, failure);
}

/** Writes the refusal of anything a handler threw (see `errorAnswer`). */
export function sendError(res: ServerResponse, err: unknown): void {
  const { status, body } = errorAnswer(err);
  sendRefusal(res, body, status);
}

function tooLarge(limit: number): ApiError {
  return new ApiError(
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
