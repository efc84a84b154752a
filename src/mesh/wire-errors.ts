/**
 * The mesh's converter, both directions: a dispatch result or anything a handler threw,
 * as a Response frame's `ok` / `errorCode` / `message` / JSON `payload`, and a Response
 * frame back as the result or the error it was; and the gRPC status a whole stream is
 * refused with (a bad token, a node that is stopping), read from the code's HTTP status
 * in the contract's error table through gRPC's own HTTP mapping.
 *
 * Every side of the mesh uses these and nothing else: the serving session
 * (`server-session.ts`), the workbench's and the worker's handlers, the callers that
 * read answers (`agent/`), and the servers that refuse streams (`mesh-server.ts`,
 * `worker-hub.ts`).
 *
 * @module
 */

import { status as GrpcStatus } from '@grpc/grpc-js';
import {
  type DispatchResult,
  type ErrorCode,
  errorFromResult,
  errorResult,
  httpStatusOf,
  INTERNAL_ERROR_MESSAGE,
  isErrorCode,
  okResult,
  resultFromError,
  type WorkbenchError,
} from '../contract/index.js';
import type { ResponseFrame } from './frames.js';
import { MAX_FRAME_BYTES } from './limits.js';

/** What a request handler answers: a Response frame's fields, before its id. */
export interface HandlerAnswer {
  readonly ok: boolean;
  readonly errorCode?: string;
  readonly message?: string;
  readonly payload?: Buffer;
}

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

/** Anything a handler threw, as its answer (the contract's converter decides what crosses). */
export function answerFromError(err: unknown): HandlerAnswer {
  return answerFromResult(resultFromError(err));
}

/** A Response frame for a failure. */
export function errorResponse(
  id: string,
  errorCode: string,
  message: string,
  payload: Buffer = Buffer.alloc(0),
): ResponseFrame {
  return { kind: 'response', id, ok: false, errorCode, message, payload };
}

/** The Response frame for an answer, refusing payloads over the frame limit. */
export function responseFrame(id: string, answer: HandlerAnswer): ResponseFrame {
  const payload = answer.payload ?? Buffer.alloc(0);
  if (payload.length > MAX_FRAME_BYTES - 64 * 1024) {
    return errorResponse(
      id,
      'payload_too_large',
      `payload_too_large: the answer is ${payload.length} bytes, over the mesh frame limit of ${MAX_FRAME_BYTES} bytes`,
    );
  }
  return {
    kind: 'response',
    id,
    ok: answer.ok,
    errorCode: answer.ok ? '' : (answer.errorCode ?? 'internal'),
    message: answer.message ?? '',
    payload,
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

/** A failed Response frame back as the error it was (`internal` if it was no failure). */
export function errorFromResponse(frame: ResponseFrame): WorkbenchError {
  const result = resultFromResponse(frame);
  return errorFromResult(
    result.ok ? errorResult('internal', 'internal: the answer was no failure') : result,
  );
}

function jsonBytes(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value ?? null), 'utf8');
}

/** gRPC's status for each HTTP status the error table names (gRPC's own HTTP mapping). */
const GRPC_STATUS_BY_HTTP: Readonly<Record<number, GrpcStatus>> = {
  400: GrpcStatus.INVALID_ARGUMENT,
  401: GrpcStatus.UNAUTHENTICATED,
  403: GrpcStatus.PERMISSION_DENIED,
  404: GrpcStatus.NOT_FOUND,
  409: GrpcStatus.FAILED_PRECONDITION,
  413: GrpcStatus.RESOURCE_EXHAUSTED,
  500: GrpcStatus.INTERNAL,
  502: GrpcStatus.UNAVAILABLE,
  503: GrpcStatus.UNAVAILABLE,
};

/** The gRPC status a stream refused with `code` ends with. */
export function streamStatusOf(code: ErrorCode): GrpcStatus {
  return GRPC_STATUS_BY_HTTP[httpStatusOf(code)] ?? GrpcStatus.UNKNOWN;
}

/**
 * The error a server emits on a stream it refuses as a whole (a call on it is answered
 * with a Response frame instead): `code`'s status, and `details` for people, starting
 * with the code.
 */
export function streamRefusal(
  code: ErrorCode,
  details: string,
): { code: GrpcStatus; details: string } {
  return { code: streamStatusOf(code), details };
}
