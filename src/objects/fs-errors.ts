/**
 * The one table turning filesystem errors (errno codes) into object store errors.
 * Read paths treat a missing file as "no object" before reaching it; whatever
 * arrives here is a failure of the store itself or a key it cannot place.
 *
 * @module
 */

import {
  InvalidObjectKeyError,
  ObjectKeyConflictError,
  ObjectStoreError,
  ObjectStoreUnavailableError,
} from './errors.js';

type Outcome = 'invalid_key' | 'conflict' | 'unavailable';

/** Errno codes with a meaning of their own; every other errno is `unavailable`. */
const ERRNO_TABLE: Readonly<Record<string, Outcome>> = {
  // O_NOFOLLOW met a symbolic link at the last component.
  ELOOP: 'invalid_key',
  // A segment is longer than the filesystem allows (usually 255 bytes).
  ENAMETOOLONG: 'invalid_key',
  // A directory stands where the object file goes, or a file where a directory is needed.
  EISDIR: 'conflict',
  ENOTDIR: 'conflict',
  ENOTEMPTY: 'conflict',
};

/**
 * Translates an error raised by a filesystem call made for `key`. Object store
 * errors and errors without an errno code (bugs) pass through unchanged.
 */
export function translateFsError(err: unknown, key: string): unknown {
  if (err instanceof ObjectStoreError) return err;
  const code = errnoCode(err);
  if (code === undefined) return err;
  const message = err instanceof Error ? err.message : String(err);
  switch (ERRNO_TABLE[code] ?? 'unavailable') {
    case 'invalid_key':
      return new InvalidObjectKeyError(key, `cannot be stored on this filesystem (${code})`, {
        cause: err,
      });
    case 'conflict':
      return new ObjectKeyConflictError(key, { cause: err });
    case 'unavailable':
      return new ObjectStoreUnavailableError(`filesystem error for key "${key}": ${message}`, {
        cause: err,
      });
  }
}

/** The errno code of `err`, if it has one. */
export function errnoCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
