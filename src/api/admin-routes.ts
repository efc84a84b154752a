/**
 * The operator's routes under `/v1/admin`: users' API tokens, made, listed and revoked
 * through the running node (so a second process never has to open its database).
 * They accept only an operator credential (`create-operator-token` of the agent
 * binary; `npm start` keeps one in its data directory); a user token is refused with
 * 403 `forbidden` (`build_not_permitted` on the build route), and an operator
 * credential authenticates nothing else.
 *
 * | route | answer |
 * |---|---|
 * | `POST /v1/admin/tokens` `{userId, label?, kind?}` | 201 `{token: {id, userId, kind, label, createdAt, revokedAt}, secret}`; `kind` `agent` (default) or `person` |
 * | `GET /v1/admin/tokens?userId=` | `{tokens}`, newest first, never a secret |
 * | `DELETE /v1/admin/tokens/:id` | `{token, revoked}`; an unknown id is 404 |
 * | `POST /v1/admin/runs/:runId/build[/stream]` `{ref?, script?, callId?}` | a dispatch result (see `build-route.ts`) |
 * | `GET /v1/admin/audit?userId=&runId=&type=&before=&limit=` | `{events, nextBefore}`: everyone's, or one user's (see `audit-routes.ts`) |
 * | `GET /v1/admin/fleet` | the replicas, as `GET /v1/fleet/workbenches` gives them without a user's worker hosts |
 *
 * @module
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  isTokenKind,
  TOKEN_KINDS,
  type TokenCreatedAnswer,
  type TokenRecord,
  type TokenRevokedAnswer,
} from '../contract/index.js';
import {
  type ApiTokenRecord,
  createApiToken,
  getApiToken,
  insertAuditEvent,
  listApiTokens,
  type Queryable,
  resolveApiToken,
  resolveOperatorCredential,
  revokeApiTokenById,
} from '../store/index.js';
import type { Logger } from '../telemetry/index.js';
import type { ApiDeps } from './api-deps.js';
import { auditPage, auditQuery } from './audit-routes.js';
import { bearerToken } from './auth.js';
import { BUILD_ROUTE, serveBuild } from './build-route.js';
import { ApiError, invalidField } from './http-errors.js';
import { BODY_LIMIT_BYTES, readJsonObject, rejectUnknownFields, sendJson } from './http-io.js';

/** User ids a token may be made for: printable ASCII without spaces. */
const USER_ID = /^[\x21-\x7e]{1,200}$/;

/** What a user token gets on an admin route: 403 with this code and message. */
interface UserTokenRefusal {
  readonly code: 'forbidden' | 'build_not_permitted';
  readonly message: string;
}

const TOKENS_REFUSAL: UserTokenRefusal = {
  code: 'forbidden',
  message: 'forbidden: /v1/admin needs an operator credential; a user token cannot manage tokens',
};

const BUILD_REFUSAL: UserTokenRefusal = {
  code: 'build_not_permitted',
  message:
    'build_not_permitted: a package build runs under system authority, which only an operator credential (create-operator-token of the agent binary) obtains; a user token cannot build',
};

/** The operator credential's id, or a 401/403 that says what is needed. */
export async function authenticateOperator(
  q: Queryable,
  req: IncomingMessage,
  userTokenRefusal: UserTokenRefusal = TOKENS_REFUSAL,
): Promise<string> {
  const token = bearerToken(req.headers.authorization);
  if (token === null) {
    throw new ApiError(
      'unauthenticated',
      'unauthenticated: send "Authorization: Bearer <operator credential>" (create-operator-token of the agent binary; npm start keeps one in <data dir>/operator-token)',
    );
  }
  const operator = await resolveOperatorCredential(q, token);
  if (operator !== null) return operator;
  if ((await resolveApiToken(q, token)) !== null) {
    throw new ApiError(userTokenRefusal.code, userTokenRefusal.message);
  }
  throw new ApiError('unauthenticated', 'unauthenticated: the credential is unknown or revoked');
}

function tokenView(t: ApiTokenRecord): TokenRecord {
  return {
    id: t.id,
    userId: t.userId,
    kind: t.kind,
    label: t.label,
    createdAt: t.createdAt.toISOString(),
    revokedAt: t.revokedAt === null ? null : t.revokedAt.toISOString(),
  };
}

/** Serves one `/v1/admin/...` request. */
export async function serveAdmin(
  deps: ApiDeps,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: URLSearchParams,
  log: Logger,
): Promise<void> {
  const build = BUILD_ROUTE.exec(path);
  const operator = await authenticateOperator(deps.db, req, build ? BUILD_REFUSAL : TOKENS_REFUSAL);
  const method = req.method ?? 'GET';
  if (build && method === 'POST') {
    const match = { runId: decodeURIComponent(build[1]!), stream: build[2] !== undefined };
    return serveBuild(deps, req, res, operator, match, log);
  }
  if (path === '/v1/admin/tokens' && method === 'POST') {
    const body = await readJsonObject(req, BODY_LIMIT_BYTES);
    rejectUnknownFields(body, ['userId', 'label', 'kind']);
    const { userId, label, kind } = body;
    if (typeof userId !== 'string' || !USER_ID.test(userId)) {
      throw invalidField('userId', 'expected 1 to 200 printable characters without spaces');
    }
    if (label !== undefined && (typeof label !== 'string' || label.length > 200)) {
      throw invalidField('label', 'expected a string of at most 200 characters');
    }
    if (kind !== undefined && !isTokenKind(kind)) {
      throw invalidField(
        'kind',
        `expected ${TOKEN_KINDS.join(' or ')}: agent for a tool loop, person for the user's own sign-in`,
      );
    }
    const made = await deps.db.transaction(async (tx) => {
      const made = await createApiToken(tx, userId, {
        label: label ?? 'made by an operator',
        kind: kind ?? 'agent',
      });
      await insertAuditEvent(tx, {
        eventType: 'token.created',
        ownerUserId: userId,
        metadata: { tokenId: made.id, kind: made.kind, operatorId: operator },
      });
      return made;
    });
    log.info(
      { tokenId: made.id, userId, kind: made.kind, operatorId: operator },
      'API token created',
    );
    const record = await getApiToken(deps.db, made.id);
    const answer: TokenCreatedAnswer = { token: tokenView(record!), secret: made.token };
    sendJson(res, 201, answer);
    return;
  }
  if (path === '/v1/admin/tokens' && method === 'GET') {
    const userId = query.get('userId') ?? undefined;
    sendJson(res, 200, { tokens: (await listApiTokens(deps.db, { userId })).map(tokenView) });
    return;
  }
  const revoke = /^\/v1\/admin\/tokens\/([^/]+)$/.exec(path);
  if (revoke && method === 'DELETE') {
    const id = decodeURIComponent(revoke[1]!);
    const done = await deps.db.transaction(async (tx) => {
      const done = await revokeApiTokenById(tx, id);
      if (done?.changed) {
        await insertAuditEvent(tx, {
          eventType: 'token.revoked',
          ownerUserId: done.token.userId,
          metadata: { tokenId: id, operatorId: operator },
        });
      }
      return done;
    });
    if (done === null) throw new ApiError('not_found', `not_found: no token "${id}"`);
    log.info({ tokenId: id, operatorId: operator }, 'API token revoked');
    const answer: TokenRevokedAnswer = { token: tokenView(done.token), revoked: done.changed };
    sendJson(res, 200, answer);
    return;
  }
  if (path === '/v1/admin/audit' && method === 'GET') {
    const userId = query.get('userId');
    if (userId !== null && !USER_ID.test(userId)) {
      throw invalidField('userId', 'expected 1 to 200 printable characters without spaces');
    }
    const filter = { ...auditQuery(query), ...(userId === null ? {} : { ownerUserId: userId }) };
    sendJson(res, 200, await auditPage(deps.db, filter));
    return;
  }
  if (path === '/v1/admin/fleet' && method === 'GET') {
    sendJson(res, 200, await deps.fleet());
    return;
  }
  throw new ApiError('not_found', `not_found: no route ${method} ${path}`);
}
