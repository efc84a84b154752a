/**
 * How authority crosses the mesh. On the wire an authority is a claim
 * (`{class, subject}`), never a credential: the receiving node re-derives the
 * in-process authority from it.
 *
 * - `user` claims become `userAuthority(subject)`: a user authority grants nothing
 *   beyond the run's own workspace, so any peer may make one.
 * - `system` claims are honoured only on a stream whose peer presented the mesh
 *   token (MEMQL_MESH_TOKEN configured on the serving node and matched); the
 *   workbench then mints `systemAuthority(subject)`. From a peer that did not
 *   authenticate, a system claim is refused with `forbidden`: nothing on a plaintext,
 *   tokenless stream can unlock `build`.
 *
 * On the sending side only an authority minted in-process by `systemAuthority` is
 * sent as `system`; an object that merely says `class: 'system'` is not sent at all.
 *
 * @module
 */

import {
  type Authority,
  type DispatchFailure,
  errorResult,
  isSystemAuthority,
  resultFromError,
  systemAuthority,
  userAuthority,
} from '../contract/index.js';
import type { WireAuthority } from './frames.js';

/**
 * The wire form of an in-process authority, or `null` when it may not be sent: it
 * claims the system class without having been minted by `systemAuthority`.
 */
export function authorityToWire(authority: Authority): WireAuthority | null {
  // Widened first: the guard's false branch would otherwise narrow `authority` to never.
  const minted: unknown = authority;
  if (isSystemAuthority(minted)) return { class: 'system', subject: authority.subject };
  if (authority.class === 'user') return { class: 'user', subject: authority.subject };
  return null;
}

/** The outcome of {@link authorityFromWire}. */
export type WireAuthorityResult =
  | { readonly ok: true; readonly authority: Authority }
  | DispatchFailure;

/**
 * Re-derives the authority of a forwarded request.
 *
 * @param wire - the claim in the Request frame.
 * @param peerAuthenticated - the stream presented the configured mesh token.
 */
export function authorityFromWire(
  wire: WireAuthority | null,
  peerAuthenticated: boolean,
): WireAuthorityResult {
  if (wire === null) {
    return errorResult(
      'invalid_arguments',
      'invalid_arguments: the forwarded request carries no authority; the sending node must set one',
    );
  }
  try {
    if (wire.class === 'user') return { ok: true, authority: userAuthority(wire.subject) };
    if (!peerAuthenticated) {
      return errorResult(
        'forbidden',
        'forbidden: a system-class authority is honoured only from a peer that presented the mesh token; set MEMQL_MESH_TOKEN on both nodes',
      );
    }
    return { ok: true, authority: systemAuthority(wire.subject) };
  } catch (err) {
    return resultFromError(err);
  }
}
