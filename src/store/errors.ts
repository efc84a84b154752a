/**
 * Store errors, translated at the edge from driver errors (Postgres SQLSTATE codes
 * and connection failures) through one table, so callers match on `code` and never
 * on a driver's message; and what each answers on the wire ({@link StoreError.answer}),
 * so a database outage is `unavailable` on every route.
 */

import { DependencyError, WorkbenchError } from '../contract/index.js';

/** Stable codes of store failures. */
export type StoreErrorCode =
  /** A uniqueness or exclusion rule refused the write; the caller may re-read and retry. */
  | 'conflict'
  /** A row the operation needs does not exist (foreign key or guarded update). */
  | 'not_found'
  /** The database could not be reached or refused service; retry later. */
  | 'unavailable'
  /** The statement was rejected for a reason that is a bug in this code. */
  | 'internal';

/**
 * A failure inside the store, carrying a stable code and the SQLSTATE when known. Only
 * an outage reaches callers as itself (`unavailable`); a conflict or a missing row
 * that no caller handled is a bug of this node, answered `internal`.
 */
export class StoreError extends DependencyError {
  override readonly name = 'StoreError';
  constructor(
    readonly code: StoreErrorCode,
    message: string,
    readonly sqlState?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  answer(): WorkbenchError | null {
    if (this.code !== 'unavailable') return null;
    return new WorkbenchError(
      'unavailable',
      'unavailable: the database is unreachable; retry shortly',
      { reason: 'database' },
      { cause: this },
    );
  }
}

/** SQLSTATE class or code to store code. Longest match wins (code before class). */
const SQLSTATE_TABLE: ReadonlyArray<[prefix: string, code: StoreErrorCode]> = [
  ['23505', 'conflict'], // unique_violation
  ['23P01', 'conflict'], // exclusion_violation
  ['40001', 'conflict'], // serialization_failure
  ['40P01', 'conflict'], // deadlock_detected
  ['23503', 'not_found'], // foreign_key_violation
  ['08', 'unavailable'], // connection exception
  ['53', 'unavailable'], // insufficient resources
  ['57P', 'unavailable'], // operator intervention (shutdown, cancel)
];

const NETWORK_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
]);

/** Turns any driver error into a {@link StoreError}; store errors pass through unchanged. */
export function translateDbError(err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const e = (err ?? {}) as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : String(err);
  if (NETWORK_ERRNOS.has(code)) {
    return new StoreError('unavailable', `database unreachable: ${message}`, undefined, {
      cause: err,
    });
  }
  if (/^[0-9A-Z]{5}$/.test(code)) {
    const hit = SQLSTATE_TABLE.find(([prefix]) => code.startsWith(prefix));
    return new StoreError(hit?.[1] ?? 'internal', message, code, { cause: err });
  }
  return new StoreError('internal', message, undefined, { cause: err });
}

/**
 * Runs a transaction body, noting in `thrown` whatever it throws: a driver's
 * transaction wrapper then tells the body's own errors (a refusal decided inside the
 * transaction, or a statement's already translated error), which it passes through
 * unchanged, from failures of BEGIN and COMMIT, which it translates.
 */
export async function rethrowing<T>(thrown: Set<unknown>, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    thrown.add(err);
    throw err;
  }
}
