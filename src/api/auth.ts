/**
 * Bearer authentication of `/v1` routes: the token maps to a user id and a token kind
 * through its stored hash, and the caller's authority is always that user's, never
 * one the request could name. The kind decides the few routes that only a person may
 * use ({@link requirePerson}); every other route takes either kind.
 *
 * @module
 */

import type { IncomingMessage } from 'node:http';
import { type Authority, type TokenKind, userAuthority } from '../contract/index.js';
import { type Queryable, resolveTokenIdentity } from '../store/index.js';
import { ApiError } from './http-errors.js';

/** Who is calling: the user a valid token belongs to, and which kind of token it is. */
export interface Caller {
  /** The user id the token maps to; runs, workspaces and artifacts are scoped to it. */
  readonly userId: string;
  /** `user:<userId>`: the only authority an API call ever carries. */
  readonly authority: Authority;
  /** `agent` (a tool loop's) or `person` (the user's own); see `contract/token-kind.ts`. */
  readonly tokenKind: TokenKind;
  /** The token's id (never its secret), recorded on the decisions it makes. */
  readonly tokenId: string;
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
      'unauthenticated',
      'unauthenticated: send "Authorization: Bearer <token>"; npm start prints a development token',
    );
  }
  const identity = await resolveTokenIdentity(q, token);
  if (identity === null) {
    throw new ApiError('unauthenticated', 'unauthenticated: the token is unknown or revoked');
  }
  return {
    userId: identity.userId,
    authority: userAuthority(`user:${identity.userId}`),
    tokenKind: identity.kind,
    tokenId: identity.tokenId,
  };
}

/** What only a person may do, as the refusal names it. */
export type PersonDecision =
  | 'approving a consent request'
  | 'denying a consent request'
  | "raising a worker's standing scope"
  | 'turning the kill switch off'
  | "opening a terminal in a run's sandbox"
  | 'revoking a token';

/**
 * Refuses `decision` unless the caller holds a person token: 403 `person_required`.
 * The refusal goes to whoever holds the agent token, a model included, so it names
 * no command or route that would do it; it says who must.
 */
export function requirePerson(caller: Caller, decision: PersonDecision): void {
  if (caller.tokenKind === 'person') return;
  throw new ApiError(
    'person_required',
    `person_required: ${decision} is the user's own decision, and this request carries an agent token (the kind a tool loop or the MCP server holds), which cannot make it; nothing changed. The user decides it themselves, signed in to the console.`,
  );
}

/** Who made a decision, as its audit event records it. */
export function decidedBy(caller: Caller): { tokenKind: TokenKind; tokenId: string } {
  return { tokenKind: caller.tokenKind, tokenId: caller.tokenId };
}
