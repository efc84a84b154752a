/**
 * What the client puts in a URL, checked for length before anything is sent. An id
 * longer than the contract allows (`MAX_ID_CHARS`) can never name anything, and a long
 * enough one would make the request line too long for the server to read (a bare HTTP
 * 431): the caller gets `invalid_arguments` naming the field and the limit instead.
 *
 * @module
 */

import { MAX_ID_CHARS, MAX_PATH_CHARS } from '../contract/index.js';
import { ClientError } from './client-error.js';

function tooLong(field: string, length: number, limit: number, what: string): ClientError {
  return new ClientError(
    'invalid_arguments',
    `invalid_arguments: ${field}: ${length === 0 ? 'empty' : `${length} characters`}; ${what} has 1 to ${limit} characters`,
    null,
    { field, length, limit },
  );
}

/** `value` when it is an id of 1 to `MAX_ID_CHARS` characters; else throws `invalid_arguments`. */
export function checkedId(field: string, value: string): string {
  if (value.length === 0 || value.length > MAX_ID_CHARS) {
    throw tooLong(field, value.length, MAX_ID_CHARS, 'an id (MAX_ID_CHARS)');
  }
  return value;
}

/** An id as one URL path segment, checked ({@link checkedId}) and encoded. */
export function idSegment(field: string, value: string): string {
  return encodeURIComponent(checkedId(field, value));
}

/** `value` when it is a workspace path of 1 to `MAX_PATH_CHARS` characters; else throws. */
export function checkedPath(field: string, value: string): string {
  if (value.length === 0 || value.length > MAX_PATH_CHARS) {
    throw tooLong(field, value.length, MAX_PATH_CHARS, 'a workspace path (MAX_PATH_CHARS)');
  }
  return value;
}
