import { createHash, randomBytes } from 'node:crypto';
import type { TokenKind } from '../contract/index.js';
import type { Queryable } from './db.js';
import { date, dateOrNull } from './rows.js';

/**
 * Prefix of every agent token this module makes, so a leaked one is recognisable in a
 * scan. (Tokens registered with {@link addApiToken} keep whatever text they have.)
 */
export const API_TOKEN_PREFIX = 'mqt_';

/** Prefix of every person token this module makes: the user's own credential. */
export const PERSON_TOKEN_PREFIX = 'mqp_';

/** The prefix a new token of `kind` gets. */
export function tokenPrefix(kind: TokenKind): string {
  return kind === 'person' ? PERSON_TOKEN_PREFIX : API_TOKEN_PREFIX;
}

/** The stored form of a token: the hex SHA-256 of its text. */
export function hashApiToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Prefix of every operator credential. */
export const OPERATOR_TOKEN_PREFIX = 'mqo_';

/** A token as made by {@link createApiToken}: the plaintext exists only in this value. */
export interface NewApiToken {
  /** The bearer token. Shown to its user once; never stored. */
  token: string;
  userId: string;
  /** The token's id: how it is listed and revoked without the secret. */
  id: string;
  kind: TokenKind;
}

/** A stored token as listed: never its secret. */
export interface ApiTokenRecord {
  id: string;
  userId: string;
  kind: TokenKind;
  label: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}

/** The id of a token whose plaintext the caller brought (the development token). */
function idOfHash(hash: string): string {
  return `tok_${hash.slice(0, 16)}`;
}

/** Options of a token being made or registered. */
export interface ApiTokenOptions {
  label?: string;
  /** Default `agent`: a person token is only ever made on purpose. */
  kind?: TokenKind;
}

/**
 * Makes a token for `userId` and stores its hash. The plaintext is returned once and
 * cannot be read back later.
 */
export async function createApiToken(
  q: Queryable,
  userId: string,
  opts: ApiTokenOptions = {},
): Promise<NewApiToken> {
  const kind = opts.kind ?? 'agent';
  const token = `${tokenPrefix(kind)}${randomBytes(32).toString('base64url')}`;
  await addApiToken(q, userId, token, { ...opts, kind });
  return { token, userId, id: idOfHash(hashApiToken(token)), kind };
}

/**
 * Stores the hash of a token whose plaintext the caller already has (the local
 * node's development tokens, kept in its data directory, after a database reset).
 * Adding the same token for the same user and kind again is a no-op; a token already
 * registered for another user, or as the other kind, is refused.
 */
export async function addApiToken(
  q: Queryable,
  userId: string,
  token: string,
  opts: ApiTokenOptions = {},
): Promise<void> {
  const hash = hashApiToken(token);
  const kind = opts.kind ?? 'agent';
  await q.execute(
    `insert into api_token (token_hash, user_id, label, id, kind) values ($1, $2, $3, $4, $5)
     on conflict (token_hash) do nothing`,
    [hash, userId, opts.label ?? null, idOfHash(hash), kind],
  );
  const rows = await q.query('select user_id, kind from api_token where token_hash = $1', [hash]);
  if (rows[0]?.user_id !== userId) {
    throw new Error('this token is already registered for another user');
  }
  if (rows[0]?.kind !== kind) {
    throw new Error(`this token is already registered as a ${String(rows[0]?.kind)} token`);
  }
}

/** Who a bearer token speaks for: its user, its kind and its id. */
export interface TokenIdentity {
  readonly userId: string;
  readonly kind: TokenKind;
  /** The token's id (never its secret), for audit events. */
  readonly tokenId: string;
}

/**
 * The user, kind and id of a live bearer token, or null for an unknown or revoked
 * one. The lookup is by hash, so comparing the secret itself never happens.
 */
export async function resolveTokenIdentity(
  q: Queryable,
  token: string,
): Promise<TokenIdentity | null> {
  if (token.length === 0 || token.length > 512) return null;
  const rows = await q.query(
    'select user_id, kind, id from api_token where token_hash = $1 and revoked_at is null',
    [hashApiToken(token)],
  );
  const r = rows[0];
  if (!r) return null;
  return { userId: String(r.user_id), kind: tokenKindOf(r.kind), tokenId: String(r.id) };
}

/**
 * The user a bearer token belongs to, or null for an unknown or revoked token (see
 * {@link resolveTokenIdentity} for its kind).
 */
export async function resolveApiToken(q: Queryable, token: string): Promise<string | null> {
  return (await resolveTokenIdentity(q, token))?.userId ?? null;
}

/** A stored kind; anything but `person` reads as the narrower `agent`. */
function tokenKindOf(value: unknown): TokenKind {
  return value === 'person' ? 'person' : 'agent';
}

/** Revokes a token; false when it was unknown or already revoked. */
export async function revokeApiToken(q: Queryable, token: string): Promise<boolean> {
  const n = await q.execute(
    'update api_token set revoked_at = now() where token_hash = $1 and revoked_at is null',
    [hashApiToken(token)],
  );
  return n > 0;
}

/** The tokens of `userId` (or of everyone), newest first, revoked ones too. */
export async function listApiTokens(
  q: Queryable,
  options: { userId?: string; limit?: number } = {},
): Promise<ApiTokenRecord[]> {
  const rows = await q.query(
    `select id, user_id, kind, label, created_at, revoked_at from api_token
     where ($1::text is null or user_id = $1::text)
     order by created_at desc, id desc limit $2::int`,
    [options.userId ?? null, options.limit ?? 1000],
  );
  return rows.map(toTokenRecord);
}

function toTokenRecord(r: Record<string, unknown>): ApiTokenRecord {
  return {
    id: String(r.id),
    userId: String(r.user_id),
    kind: tokenKindOf(r.kind),
    label: r.label === null ? null : String(r.label),
    createdAt: date(r.created_at),
    revokedAt: dateOrNull(r.revoked_at),
  };
}

/**
 * Revokes a token by id. Null when no token has that id; otherwise its record, with
 * `changed` false when it was already revoked.
 */
export async function revokeApiTokenById(
  q: Queryable,
  id: string,
): Promise<{ token: ApiTokenRecord; changed: boolean } | null> {
  const n = await q.execute(
    'update api_token set revoked_at = now() where id = $1 and revoked_at is null',
    [id],
  );
  const token = await getApiToken(q, id);
  return token ? { token, changed: n > 0 } : null;
}

/** One token by id (never its secret), or null. */
export async function getApiToken(q: Queryable, id: string): Promise<ApiTokenRecord | null> {
  const rows = await q.query(
    'select id, user_id, kind, label, created_at, revoked_at from api_token where id = $1',
    [id],
  );
  return rows[0] ? toTokenRecord(rows[0]) : null;
}

/** An operator credential as made: the plaintext exists only in this value. */
export interface NewOperatorCredential {
  token: string;
  id: string;
}

/** Makes an operator credential and stores its hash; the plaintext is returned once. */
export async function createOperatorCredential(
  q: Queryable,
  opts: { label?: string } = {},
): Promise<NewOperatorCredential> {
  const token = `${OPERATOR_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  const hash = hashApiToken(token);
  const id = `op_${hash.slice(0, 16)}`;
  await q.execute('insert into operator_credential (id, token_hash, label) values ($1, $2, $3)', [
    id,
    hash,
    opts.label ?? null,
  ]);
  return { token, id };
}

/** The id of a live operator credential, or null for anything else (a user token too). */
export async function resolveOperatorCredential(
  q: Queryable,
  token: string,
): Promise<string | null> {
  if (token.length === 0 || token.length > 512) return null;
  const rows = await q.query(
    'select id from operator_credential where token_hash = $1 and revoked_at is null',
    [hashApiToken(token)],
  );
  return rows[0] ? String(rows[0].id) : null;
}
