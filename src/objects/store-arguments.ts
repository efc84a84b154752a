/**
 * Checks of the non-key arguments every store takes. A bad range, limit or length
 * is a bug in the caller, not a condition to handle, so these throw `RangeError`
 * rather than a coded store error.
 *
 * @module
 */

import { type ByteRange, DEFAULT_LIST_LIMIT, type PutObjectOptions } from './object-store.js';

/** Throws `RangeError` unless `range` is absent or has whole, non-negative numbers. */
export function checkByteRange(range: ByteRange | undefined): void {
  if (range === undefined) return;
  if (!isCount(range.offset)) {
    throw new RangeError(`range offset must be a whole number >= 0, got ${range.offset}`);
  }
  if (range.length !== undefined && !isCount(range.length)) {
    throw new RangeError(`range length must be a whole number >= 0, got ${range.length}`);
  }
}

/** The page size to use: the given limit, checked, or {@link DEFAULT_LIST_LIMIT}. */
export function listLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_LIST_LIMIT;
  if (!isCount(limit) || limit < 1) {
    throw new RangeError(`list limit must be a whole number >= 1, got ${limit}`);
  }
  return limit;
}

/** Throws `RangeError` unless `contentLength`, when given, is a whole number >= 0. */
export function checkPutOptions(opts: PutObjectOptions | undefined): void {
  const length = opts?.contentLength;
  if (length !== undefined && !isCount(length)) {
    throw new RangeError(`contentLength must be a whole number >= 0, got ${length}`);
  }
}

function isCount(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0;
}
