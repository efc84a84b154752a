/**
 * The query of a newest-first list a page at a time (`?status=&limit=&before=`), as
 * the run list and a run's command list read it; and the parameters of the shorter
 * lists (consent requests, routing records) that answer one bounded page.
 *
 * @module
 */

import { MAX_ID_CHARS } from '../contract/index.js';
import { invalidField } from './http-errors.js';

/** Items per page when `limit` is not given. */
export const PAGE_DEFAULT = 50;
/** The largest `limit` a caller may ask for. */
export const PAGE_MAX = 500;

/** A parsed page query. */
export interface PageQuery<S extends string> {
  /** Only items in this status. */
  readonly status?: S;
  /** Page size, 1 to {@link PAGE_MAX}. */
  readonly limit: number;
  /** Only items older than this one (the previous page's `nextBefore`). */
  readonly before?: string;
}

function single(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length > 1) throw invalidField(name, 'given more than once');
  return values[0];
}

/** Reads `?status=&limit=&before=`; a bad value is `invalid_arguments` naming it. Pure. */
export function parsePageQuery<S extends string>(
  query: URLSearchParams,
  statuses: readonly S[],
  cursorNoun: string,
): PageQuery<S> {
  const status = single(query, 'status');
  if (status !== undefined && !(statuses as readonly string[]).includes(status)) {
    throw invalidField('status', `expected one of ${statuses.join(', ')}`);
  }
  const limitText = single(query, 'limit');
  let limit = PAGE_DEFAULT;
  if (limitText !== undefined) {
    limit = /^[1-9]\d{0,3}$/.test(limitText) ? Number(limitText) : Number.NaN;
    if (!(limit <= PAGE_MAX)) {
      throw invalidField('limit', `expected an integer from 1 to ${PAGE_MAX}`);
    }
  }
  const before = single(query, 'before');
  if (before !== undefined && (before.length === 0 || before.length > MAX_ID_CHARS)) {
    throw invalidField('before', `expected ${cursorNoun} id of 1 to ${MAX_ID_CHARS} characters`);
  }
  return {
    ...(status === undefined ? {} : { status: status as S }),
    limit,
    ...(before === undefined ? {} : { before }),
  };
}

/** Records a list without pages answers when `limit` is not given. */
export const LIST_DEFAULT = 100;

/**
 * An id-like query parameter: given at most once, 1 to `MAX_ID_CHARS` characters;
 * `undefined` when absent.
 */
export function oneParam(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length > 1) throw invalidField(name, 'given more than once');
  const value = values[0];
  if (value !== undefined && (value.length === 0 || value.length > MAX_ID_CHARS)) {
    throw invalidField(name, `expected 1 to ${MAX_ID_CHARS} characters`);
  }
  return value;
}

/** `?limit=` of a list without pages: 1 to {@link PAGE_MAX}, {@link LIST_DEFAULT} when absent. */
export function listLimit(query: URLSearchParams): number {
  const text = oneParam(query, 'limit');
  if (text === undefined) return LIST_DEFAULT;
  const limit = /^[1-9]\d{0,3}$/.test(text) ? Number(text) : Number.NaN;
  if (!(limit <= PAGE_MAX)) {
    throw invalidField('limit', `expected an integer from 1 to ${PAGE_MAX}`);
  }
  return limit;
}
