/**
 * Object store failures. Every failure a caller can act on carries a stable `code`;
 * foreign errors (errno codes, S3 error names and HTTP statuses) are turned into
 * these at the edge of each implementation, through one table each. On the wire an
 * outage answers `unavailable` ({@link ObjectStoreError.answer}), on every route.
 *
 * @module
 */

import { DependencyError, WorkbenchError } from '../contract/index.js';

/** Stable codes of object store failures. A code never changes meaning. */
export type ObjectStoreErrorCode =
  /** No object is stored under the key (for `copy`, under the source key). */
  | 'object_not_found'
  /** The key (or list prefix) breaks the key rules, or cannot be used safely by this store. */
  | 'invalid_object_key'
  /**
   * The filesystem store cannot hold the key because another key occupies its path
   * as a file where a directory is needed, or the other way round (`a` and `a/b`).
   */
  | 'object_key_conflict'
  /** The body's length differs from the declared `contentLength`; nothing was stored. */
  | 'object_size_mismatch'
  /** The backing store failed (network, credentials, server error, disk); retry later. */
  | 'object_store_unavailable';

/**
 * Base class of every object store failure; match on {@link ObjectStoreError.code}.
 * Only an outage reaches callers as itself (`unavailable`); a missing object, a key
 * refused or a size mismatch that no caller handled is a bug of this node (`internal`).
 */
export abstract class ObjectStoreError extends DependencyError {
  abstract readonly code: ObjectStoreErrorCode;

  answer(): WorkbenchError | null {
    if (this.code !== 'object_store_unavailable') return null;
    return new WorkbenchError(
      'unavailable',
      'unavailable: the object store is unreachable; retry shortly',
      { reason: 'object_store' },
      { cause: this },
    );
  }
}

/** No object is stored under the key. */
export class ObjectNotFoundError extends ObjectStoreError {
  override readonly name = 'ObjectNotFoundError';
  readonly code = 'object_not_found';
  constructor(
    /** The key that was looked up. */
    readonly key: string,
    options?: { cause?: unknown },
  ) {
    super(`object_not_found: no object is stored under key "${key}"`, options);
  }
}

/** A key or prefix was refused before any I/O, or resolved through a symbolic link. */
export class InvalidObjectKeyError extends ObjectStoreError {
  override readonly name = 'InvalidObjectKeyError';
  readonly code = 'invalid_object_key';
  constructor(
    /** The refused key or prefix, as given. */
    readonly key: string,
    /** Which rule the key breaks, for people. */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid_object_key: ${JSON.stringify(truncate(key))} ${reason}`, options);
  }
}

/** The filesystem store cannot place a key because another key is in its way. */
export class ObjectKeyConflictError extends ObjectStoreError {
  override readonly name = 'ObjectKeyConflictError';
  readonly code = 'object_key_conflict';
  constructor(
    readonly key: string,
    options?: { cause?: unknown },
  ) {
    super(
      `object_key_conflict: key "${key}" needs a path that another key occupies ` +
        '(a key cannot be both an object and a prefix of other keys in the filesystem store)',
      options,
    );
  }
}

/** The body was not as long as the caller declared. */
export class ObjectSizeMismatchError extends ObjectStoreError {
  override readonly name = 'ObjectSizeMismatchError';
  readonly code = 'object_size_mismatch';
  constructor(
    readonly key: string,
    /** The declared `contentLength`. */
    readonly expected: number,
    /** The bytes the body actually held (or held at least, when it ran over). */
    readonly actual: number,
  ) {
    super(
      `object_size_mismatch: key "${key}" was declared as ${expected} bytes but the body ` +
        `held ${actual}; nothing was stored`,
    );
  }
}

/** The backing store could not serve the request. */
export class ObjectStoreUnavailableError extends ObjectStoreError {
  override readonly name = 'ObjectStoreUnavailableError';
  readonly code = 'object_store_unavailable';
  constructor(message: string, options?: { cause?: unknown }) {
    super(`object_store_unavailable: ${message}`, options);
  }
}

/** True when `err` is an object store failure with the given code. */
export function isObjectStoreError(
  err: unknown,
  code?: ObjectStoreErrorCode,
): err is ObjectStoreError {
  return err instanceof ObjectStoreError && (code === undefined || err.code === code);
}

function truncate(key: string): string {
  return key.length > 80 ? `${key.slice(0, 77)}...` : key;
}
