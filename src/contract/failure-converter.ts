/**
 * The failure converter: anything thrown, as the dispatch failure every wire carries,
 * and a dispatch failure back as the error it was. Each wire's own converter
 * (`api/http-errors.ts`, `mesh/wire-errors.ts`, `mcp/tool-errors.ts`) starts from
 * these, so a failure answers the same code whichever way it travels.
 *
 * What crosses: a {@link WorkbenchError}'s code, message and payload (they were
 * written for the caller); a {@link DependencyError}'s answer (its edge translated it,
 * an outage as `unavailable`). Anything else is `internal` with a fixed message: a
 * foreign message (a SQL error, a file system path, a stack) describes the node and
 * may carry secrets, so the node logs it instead.
 *
 * @module
 */

import { DependencyError, WorkbenchError } from './errors.js';
import { type DispatchFailure, errorResult, INTERNAL_ERROR_MESSAGE } from './result.js';

/** Anything thrown, as the {@link WorkbenchError} it answers (`internal` for a bug). */
export function workbenchErrorOf(err: unknown): WorkbenchError {
  if (err instanceof WorkbenchError) return err;
  const answer = err instanceof DependencyError ? err.answer() : null;
  return (
    answer ?? new WorkbenchError('internal', INTERNAL_ERROR_MESSAGE, undefined, { cause: err })
  );
}

/** Anything thrown, as a failed dispatch result (see the module's rules). */
export function resultFromError(err: unknown): DispatchFailure {
  const known = workbenchErrorOf(err);
  return errorResult(known.code, known.message, known.payload);
}

/** A failed dispatch result as the error it was, for a caller that throws (a port, a build). */
export function errorFromResult(failure: DispatchFailure): WorkbenchError {
  return new WorkbenchError(failure.errorCode, failure.message, failure.payload);
}
