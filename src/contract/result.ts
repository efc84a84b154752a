/**
 * The dispatch result: what every `workbenchHost` call answers, locally or over the mesh.
 *
 * Failure is ordinary data here (a refused call is a normal answer to a tool loop),
 * which is why this is a result type rather than a thrown error.
 *
 * @module
 */

import type { ErrorCode } from './errors.js';
import type { Scope } from './scope.js';
import type { OutputStream } from './wire-shapes.js';

/** A call that did what it was asked. */
export interface DispatchSuccess<P = unknown> {
  /** Discriminant. */
  readonly ok: true;
  /** The action's answer (file content, listing, command outcome, ...). */
  readonly payload: P;
  /** Set when the call ran on a worker host instead of the workbench. */
  readonly routing?: WorkerRouting;
}

/** A call that was refused or failed; `errorCode` is what callers match on. */
export interface DispatchFailure {
  /** Discriminant. */
  readonly ok: false;
  /** The stable code (see `ERROR_CODES`). */
  readonly errorCode: ErrorCode;
  /** For people and models: what happened and what to do. Never parsed by programs. */
  readonly message: string;
  /** Structured detail, when the code defines one (e.g. `environment_mismatch`). */
  readonly payload?: unknown;
  /** Set when the call was sent to a worker host and failed there. */
  readonly routing?: WorkerRouting;
}

/**
 * One line of a streaming dispatch answer (`application/x-ndjson`): an `output` line per
 * chunk of a running command's output, its bytes in base64, then exactly one `result`.
 */
export type DispatchStreamLine =
  | {
      readonly type: 'output';
      readonly stream: OutputStream;
      /** The chunk's bytes, base64. */
      readonly data: string;
    }
  | { readonly type: 'result'; readonly result: DispatchResult };

/** Where a call that ran on a worker host ran, on its answer (`result.routing`). */
export interface WorkerRouting {
  readonly target: 'worker';
  readonly reroutedFrom: 'workbench';
  /** The worker host's node id. */
  readonly workerId: string;
  /** The needs that sent it there: the workbench's `unmetNeeds` (`UnmetNeed` values). */
  readonly needs: readonly string[];
  /** The standing scope the call ran under. */
  readonly scope: Scope;
  /** The routing record (`GET /v1/worker-invocations/:id`). */
  readonly invocationId: string;
}

/** The answer to one dispatch. */
export type DispatchResult<P = unknown> = DispatchSuccess<P> | DispatchFailure;

/** The message of every `internal` failure on the wire: what happened is in the node's logs. */
export const INTERNAL_ERROR_MESSAGE = 'internal: internal error; see node logs';

/** A successful result carrying `payload`. */
export function okResult<P>(payload: P): DispatchSuccess<P> {
  return { ok: true, payload };
}

/**
 * A failed result. `payload` is only set as a key when given, so results compare
 * and serialise the same whether or not they went over the wire.
 */
export function errorResult(code: ErrorCode, message: string, payload?: unknown): DispatchFailure {
  return payload === undefined
    ? { ok: false, errorCode: code, message }
    : { ok: false, errorCode: code, message, payload };
}
