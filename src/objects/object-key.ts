/**
 * The rules every object key obeys, shared by all stores, and the order keys are
 * listed in.
 *
 * A key is a `/`-separated path of segments: non-empty, at most
 * {@link MAX_OBJECT_KEY_BYTES} bytes of UTF-8, no NUL, no `\`, no leading `/`, and no
 * empty, `.` or `..` segment. The rules are stricter than S3's so that every key is
 * also a safe relative path for the filesystem store, and so both stores accept
 * exactly the same keys.
 *
 * @module
 */

import { InvalidObjectKeyError } from './errors.js';

/** The longest key, in bytes of UTF-8 (S3's limit). */
export const MAX_OBJECT_KEY_BYTES = 1024;

/** Throws {@link InvalidObjectKeyError} unless `key` obeys the key rules. */
export function validateObjectKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) {
    throw new InvalidObjectKeyError(String(key), 'is empty; a key needs at least one character');
  }
  checkCharacters(key);
  checkSegments(key, key.split('/'));
}

/**
 * Throws {@link InvalidObjectKeyError} unless `prefix` can start a valid key. The
 * empty prefix matches every key. Everything up to the last `/` must be whole valid
 * segments; what follows it is a partial segment and only has to avoid the forbidden
 * characters (`a/b.` matches `a/b.txt`).
 */
export function validateListPrefix(prefix: string): void {
  if (typeof prefix !== 'string') {
    throw new InvalidObjectKeyError(String(prefix), 'is not a string');
  }
  if (prefix.length === 0) return;
  checkCharacters(prefix);
  const segments = prefix.split('/');
  segments.pop();
  checkSegments(prefix, segments);
}

/**
 * Orders keys by the bytes of their UTF-8 encoding, as S3 lists them. JavaScript's
 * `<` compares UTF-16 code units, which disagrees with UTF-8 byte order once
 * characters beyond U+FFFF meet characters in U+E000..U+FFFF.
 */
export function compareObjectKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function checkCharacters(value: string): void {
  if (Buffer.byteLength(value, 'utf8') > MAX_OBJECT_KEY_BYTES) {
    throw new InvalidObjectKeyError(value, `is longer than ${MAX_OBJECT_KEY_BYTES} bytes`);
  }
  if (value.includes('\0')) throw new InvalidObjectKeyError(value, 'contains a NUL character');
  if (value.includes('\\')) throw new InvalidObjectKeyError(value, 'contains a backslash');
  if (value.startsWith('/')) throw new InvalidObjectKeyError(value, 'starts with "/"');
}

function checkSegments(value: string, segments: string[]): void {
  for (const segment of segments) {
    if (segment === '') {
      throw new InvalidObjectKeyError(value, 'has an empty segment ("//" or a trailing "/")');
    }
    if (segment === '.' || segment === '..') {
      throw new InvalidObjectKeyError(value, `has a "${segment}" segment`);
    }
  }
}
