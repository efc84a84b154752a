/**
 * A user's own API tokens: listed with any of the user's tokens (never a secret), and
 * revoked with the user's person token only: a tool loop's agent token cannot take a
 * person's credentials away, nor its own siblings. Tokens are made by an operator
 * (`/v1/admin/tokens`) or by `npm start` for its development user.
 *
 * | route | answer |
 * |---|---|
 * | `GET /v1/tokens` | `{tokens}`, newest first: `id, kind, label, createdAt, revokedAt` |
 * | `DELETE /v1/tokens/:tokenId` | `{token, revoked}`; another user's token is 404 |
 *
 * @module
 */

import type { OwnTokenRecord, TokenRevokedAnswer } from '../contract/index.js';
import {
  type ApiTokenRecord,
  getApiToken,
  insertAuditEvent,
  listApiTokens,
  revokeApiTokenById,
} from '../store/index.js';
import type { RouteContext } from './api-deps.js';
import { requirePerson } from './auth.js';
import { ApiError } from './http-errors.js';
import { sendJson } from './http-io.js';

function ownTokenView(t: ApiTokenRecord): OwnTokenRecord {
  return {
    id: t.id,
    kind: t.kind,
    label: t.label,
    createdAt: t.createdAt.toISOString(),
    revokedAt: t.revokedAt === null ? null : t.revokedAt.toISOString(),
  };
}

/** `GET /v1/tokens`: the caller's tokens. */
export async function listOwnTokensRoute(ctx: RouteContext): Promise<void> {
  const tokens = await listApiTokens(ctx.deps.db, { userId: ctx.caller.userId });
  sendJson(ctx.res, 200, { tokens: tokens.map(ownTokenView) });
}

/** `DELETE /v1/tokens/:tokenId`: revokes one of the caller's tokens; a person token only. */
export async function revokeOwnTokenRoute(ctx: RouteContext): Promise<void> {
  requirePerson(ctx.caller, 'revoking a token');
  const id = ctx.params[0]!;
  const done = await ctx.deps.db.transaction(async (tx) => {
    const token = await getApiToken(tx, id);
    if (token === null || token.userId !== ctx.caller.userId) return null;
    const revoked = await revokeApiTokenById(tx, id);
    if (revoked?.changed) {
      await insertAuditEvent(tx, {
        eventType: 'token.revoked',
        ownerUserId: ctx.caller.userId,
        metadata: { tokenId: id, byTokenId: ctx.caller.tokenId },
      });
    }
    return revoked;
  });
  if (done === null) throw new ApiError('not_found', `not_found: you have no token "${id}"`);
  ctx.log.info({ tokenId: id }, 'API token revoked by its user');
  const answer: TokenRevokedAnswer<OwnTokenRecord> = {
    token: ownTokenView(done.token),
    revoked: done.changed,
  };
  sendJson(ctx.res, 200, answer);
}
