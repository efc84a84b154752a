/**
 * Mesh authentication by shared token. The caller puts `MEMQL_MESH_TOKEN` in the
 * `authorization` metadata entry of the stream (`Bearer <token>`); the serving node
 * compares it in constant time. TLS (see `mesh-credentials.ts`) protects the token in
 * transit and, with client certificates, authenticates the connection itself.
 *
 * @module
 */

import { createHash, timingSafeEqual } from 'node:crypto';
import { Metadata } from '@grpc/grpc-js';

/** The metadata key that carries the token. */
export const MESH_TOKEN_METADATA_KEY = 'authorization';
const BEARER = 'Bearer ';

/** Stream metadata presenting `token`; empty when there is none. */
export function meshTokenMetadata(token: string | null): Metadata {
  const metadata = new Metadata();
  if (token !== null) metadata.set(MESH_TOKEN_METADATA_KEY, `${BEARER}${token}`);
  return metadata;
}

/** The outcome of {@link checkMeshToken}. */
export type MeshAuthResult =
  /**
   * Accepted. `authenticated` is true only when a token is configured and was
   * presented correctly; a node without a token accepts everyone, unauthenticated.
   */
  | { readonly ok: true; readonly authenticated: boolean }
  /** Refused: the token is configured and was not presented, or not correctly. */
  | { readonly ok: false; readonly reason: 'missing' | 'wrong' };

/**
 * Whether two secrets are equal, in time that does not depend on where they differ.
 * Both sides are hashed first so their lengths are equal too.
 */
export function tokensEqual(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/** Checks the token a stream presents against the configured one. */
export function checkMeshToken(expected: string | null, metadata: Metadata): MeshAuthResult {
  if (expected === null) return { ok: true, authenticated: false };
  const values = metadata.get(MESH_TOKEN_METADATA_KEY);
  const value = values.length === 1 ? values[0] : undefined;
  if (typeof value !== 'string' || !value.startsWith(BEARER))
    return { ok: false, reason: 'missing' };
  return tokensEqual(value.slice(BEARER.length), expected)
    ? { ok: true, authenticated: true }
    : { ok: false, reason: 'wrong' };
}
