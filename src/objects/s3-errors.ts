/**
 * The one table turning S3 failures into object store errors. The AWS SDK throws
 * service errors named after S3's error code with the HTTP status in `$metadata`,
 * and passes network errors through with their errno `code`; both are read here
 * and nowhere else.
 *
 * @module
 */

import {
  InvalidObjectKeyError,
  ObjectNotFoundError,
  ObjectStoreError,
  ObjectStoreUnavailableError,
} from './errors.js';

type Outcome = 'not_found' | 'invalid_key' | 'unavailable';

/** S3 error names (and SDK error names) with a meaning of their own. */
const BY_NAME: Readonly<Record<string, Outcome>> = {
  NoSuchKey: 'not_found',
  NotFound: 'not_found',
  // The bucket is configuration, not data: a missing one is the store being unusable.
  NoSuchBucket: 'unavailable',
  KeyTooLongError: 'invalid_key',
  AccessDenied: 'unavailable',
  AllAccessDisabled: 'unavailable',
  InvalidAccessKeyId: 'unavailable',
  SignatureDoesNotMatch: 'unavailable',
  ExpiredToken: 'unavailable',
  InvalidToken: 'unavailable',
  RequestTimeout: 'unavailable',
  RequestTimeTooSkewed: 'unavailable',
  SlowDown: 'unavailable',
  ServiceUnavailable: 'unavailable',
  InternalError: 'unavailable',
  CredentialsProviderError: 'unavailable',
  TimeoutError: 'unavailable',
};

/** Errno codes of a connection that failed, was refused, or timed out. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTDOWN',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

interface S3ErrorShape {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  $metadata?: { httpStatusCode?: unknown };
}

/**
 * Translates an error from an S3 call about `key` (omitted for calls about no one
 * key). Unrecognised errors, which mean a bug in the request rather than a state
 * of the store, pass through unchanged.
 */
export function translateS3Error(err: unknown, key?: string): unknown {
  if (err instanceof ObjectStoreError) return err;
  const { name, code, message, status } = describe(err);
  const outcome = BY_NAME[name] ?? (NETWORK_CODES.has(code) ? 'unavailable' : byStatus(status));
  switch (outcome) {
    case 'not_found':
      if (key !== undefined) return new ObjectNotFoundError(key, { cause: err });
      return new ObjectStoreUnavailableError(`S3 answered 404 (${name}): ${message}`, {
        cause: err,
      });
    case 'invalid_key':
      return new InvalidObjectKeyError(key ?? '', `was refused by S3 (${name})`, { cause: err });
    case 'unavailable': {
      const what = status === undefined ? code || name : `${status} ${name}`;
      return new ObjectStoreUnavailableError(`S3 request failed (${what}): ${message}`, {
        cause: err,
      });
    }
    case undefined:
      return err;
  }
}

/** A `.catch` handler that rethrows an S3 error translated for `key`. */
export function rethrowTranslated(key?: string): (err: unknown) => never {
  return (err) => {
    throw translateS3Error(err, key);
  };
}

/** True when S3 refused a range because it starts at or past the end of the object. */
export function isUnsatisfiableRange(err: unknown): boolean {
  const { name, status } = describe(err);
  return name === 'InvalidRange' || status === 416;
}

function byStatus(status: number | undefined): Outcome | undefined {
  if (status === undefined) return undefined;
  if (status === 404) return 'not_found';
  if (status === 401 || status === 403 || status === 408 || status === 429 || status >= 500) {
    return 'unavailable';
  }
  return undefined;
}

function describe(err: unknown): { name: string; code: string; message: string; status?: number } {
  const e = (typeof err === 'object' && err !== null ? err : {}) as S3ErrorShape;
  const status = e.$metadata?.httpStatusCode;
  return {
    name: typeof e.name === 'string' ? e.name : '',
    code: typeof e.code === 'string' ? e.code : '',
    message: typeof e.message === 'string' ? e.message : String(err),
    ...(typeof status === 'number' ? { status } : {}),
  };
}
