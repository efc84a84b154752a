import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from './db.js';

/** Prefix of every token this module makes, so a leaked one is recognisable in a scan. */
export const API_TOKEN_PREFIX = 'mqt_';

/** The stored form of a token: the hex SHA-256 of its text. */
export function hashApiToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A token as made by {@link createApiToken}: the plaintext exists only in this value. */
export interface NewApiToken {
  /** The bearer token. Shown to its user once; never stored. */
  token: string;
  userId: string;
}

/**
 * Makes a token for `userId` and stores its hash. The plaintext is returned once and
 * cannot be read back later.
 */
export async function createApiToken(
  q: Queryable,
  userId: string,
  opts: { label?: string } = {},
): Promise<NewApiToken> {
  const token = `${API_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  await addApiToken(q, userId, token, opts);
  return { token, userId };
}

/**
 * Stores the hash of a token whose plaintext the caller already has (the local
 * node's development token, kept in its data directory, after a database reset).
 * Adding the same token for the same user again is a no-op; a token already
 * registered for another user is refused.
 */
export async function addApiToken(
  q: Queryable,
  userId: string,
  token: string,
  opts: { label?: string } = {},
): Promise<void> {
  const hash = hashApiToken(token);
  await q.execute(
    `insert into api_token (token_hash, user_id, label) values ($1, $2, $3)
     on conflict (token_hash) do nothing`,
    [hash, userId, opts.label ?? null],
  );
  const rows = await q.query('select user_id from api_token where token_hash = $1', [hash]);
  if (rows[0]?.user_id !== userId) {
    throw new Error('this token is already registered for another user');
  }
}

/**
 * The user a bearer token belongs to, or null for an unknown or revoked token. The
 * lookup is by hash, so comparing the secret itself never happens.
 */
export async function resolveApiToken(q: Queryable, token: string): Promise<string | null> {
  if (token.length === 0 || token.length > 512) return null;
  const rows = await q.query(
    'select user_id from api_token where token_hash = $1 and revoked_at is null',
    [hashApiToken(token)],
  );
  return rows[0] ? String(rows[0].user_id) : null;
}

/** Revokes a token; false when it was unknown or already revoked. */
export async function revokeApiToken(q: Queryable, token: string): Promise<boolean> {
  const n = await q.execute(
    'update api_token set revoked_at = now() where token_hash = $1 and revoked_at is null',
    [hashApiToken(token)],
  );
  return n > 0;
}
