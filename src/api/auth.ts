/**
 * Bearer authentication of `/v1` routes: the token maps to a user id through its
 * stored hash, and the caller's authority is always that user's, never one the
 * request could name.
 *
 * @module
 */

import type { IncomingMessage } from 'node:http';
import { type Authority, userAuthority } from '../contract/index.js';
import { type Queryable, resolveApiToken } from '../store/index.js';
import { ApiError } from './http-io.js';

/** Who is calling: the user a valid token belongs to. */
export interface Caller {
  /** The user id the token maps to; runs, workspaces and artifacts are scoped to it. */
  readonly userId: string;
  /** `user:<userId>`: the only authority an API call ever carries. */
  readonly authority: Authority;
}

const BEARER = /^Bearer[ \t]+([\x21-\x7e]+)[ \t]*$/i;

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | undefined): string | null {
  if (header === undefined) return null;
  return BEARER.exec(header)?.[1] ?? null;
}

/** Authenticates a request; a missing or unknown token is a 401 `unauthenticated`. */
export async function authenticate(q: Queryable, req: IncomingMessage): Promise<Caller> {
  const token = bearerToken(req.headers.authorization);
  if (token === null) {
    throw new ApiError(
      401,
      'unauthenticated',
      'unauthenticated: send "Authorization: Bearer <token>"; npm start prints a development token',
    );
  }
  const userId = await resolveApiToken(q, token);
  if (userId === null) {
    throw new ApiError(401, 'unauthenticated', 'unauthenticated: the token is unknown or revoked');
  }
  return { userId, authority: userAuthority(`user:${userId}`) };
}
