/**
 * The agent node's HTTP API and operator console, on `node:http`.
 *
 * Routes (every `/v1` route needs `Authorization: Bearer <token>`):
 *
 * | route | answer |
 * |---|---|
 * | `POST /v1/runs` | 201 `{run}`: body `{conversationId?, retentionMs?, network?: {allow, secrets?}}` |
 * | `GET /v1/runs?status=&limit=&before=` | `{runs, nextBefore}`, newest first |
 * | `GET /v1/runs/:runId` | `{run}` |
 * | `PUT /v1/runs/:runId/network` | `{run}`: body `{allow, secrets?}` replaces the run's network (see `network-routes.ts`) |
 * | `POST /v1/runs/:runId/end` | `{run, released}` |
 * | `DELETE /v1/runs/:runId` | `{deleted: {objects, commands, workspaces, artifacts}}` |
 * | `POST /v1/dispatch?cancelOnDisconnect=` | the dispatch result |
 * | `POST /v1/dispatch/stream?cancelOnDisconnect=` | NDJSON output lines, then one result line |
 * | `PUT /v1/runs/:runId/files?path=&mode=` | the body as the file, whole or not at all: the `fs_write` answer |
 * | `GET /v1/runs/:runId/files?path=` | the file's bytes (see `file-routes.ts`) |
 * | any method, and WebSocket, `/v1/runs/:runId/ports/:port/...` | a port of the run's sandbox, forwarded (see `port-routes.ts`) |
 * | `POST`, `GET /v1/runs/:runId/processes[/:processId[/output\|stdin\|signal\|wait\|resize]]`, `POST /v1/runs/:runId/shell` | a run's background processes and a person's terminal (see `process-routes.ts`) |
 * | `GET /v1/runs/:runId/commands?status=&limit=&before=` | `{commands, nextBefore}`, newest first |
 * | `GET /v1/commands/:commandId` | `{command}` |
 * | `POST /v1/commands/:commandId/cancel` | `{command, effect}` (see `cancel-routes.ts`) |
 * | `GET /v1/runs/:runId/calls/:callId` | `{command}`: the command a call with that `callId` queued |
 * | `POST /v1/runs/:runId/calls/:callId/cancel` | `{command, effect}`: the command a call queued |
 * | `GET /v1/workspaces?includeReleased=&limit=&before=` | `{workspaces, nextBefore}`, newest first |
 * | `GET /v1/artifacts?runId=` | `{artifacts}` |
 * | `GET /v1/artifacts/:id` | `{artifact}` |
 * | `GET /v1/artifacts/:id/content` | the bytes |
 * | `GET /v1/fleet/workbenches` | `{mode, replicas, workers}` (`workers`: the caller's, as below) |
 * | `GET /v1/me` | `{userId, tokenKind}`: who the token speaks for |
 * | `GET /v1/audit?runId=&type=&before=&limit=` | `{events, nextBefore}`: the caller's audit events, newest first (see `audit-routes.ts`) |
 * | `GET /v1/tokens`, `DELETE /v1/tokens/:id` | the caller's tokens; revoking one takes a person token (see `token-routes.ts`) |
 * | `GET /v1/workers` | `{killSwitch, workers}`: the caller's worker hosts, stored and live, with their consent |
 * | `PUT /v1/workers/:workerId/scope` | `{consent, previousScope}`: body `{scope}`, any rung; raising it needs a person token |
 * | `POST /v1/workers/kill-switch` | `{killSwitch}`: body `{engaged, workerId?}`; no `workerId` is every worker; `false` needs a person token |
 * | `GET /v1/consent-requests?status=&limit=` | `{requests}`, newest first; `pending` by default |
 * | `POST /v1/consent-requests/:id/approve` | `{request, consent, covers, message}`: body `{scope?}`; a person token only |
 * | `POST /v1/consent-requests/:id/deny` | `{request}`; a request already decided is 409 `invalid_arguments`; a person token only |
 * | `GET /v1/worker-invocations?runId=&workerId=&limit=` | `{invocations}`: routing records, newest first |
 * | `GET /v1/worker-invocations/:id` | `{invocation}` |
 * | `GET /healthz` | liveness, no token: `{ok: true}` while the process serves |
 * | `GET /readyz` | readiness, no token: 200 `{ready: true, checks}` or 503 (see `readiness.ts`) |
 * | `GET /metrics`, `GET /console` | no token |
 * | `/v1/admin/tokens`, `/v1/admin/runs/:runId/build`, `/v1/admin/audit`, `/v1/admin/fleet` | users' API tokens, package builds, everyone's audit events and the replicas, with an operator credential (see `admin-routes.ts`) |
 * | `POST /mcp` | MCP over Streamable HTTP, stateless (see `src/mcp`); bearer token |
 *
 * Another user's ids answer 404 `not_found`, never 403, so ids do not leak. The routes
 * that only a person may use answer an agent token 403 `person_required` (see
 * `auth.ts`); every other route takes a token of either kind.
 *
 * @module
 */

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ListenAddress } from '../config/index.js';
import { serveMcpHttp } from '../mcp/index.js';
import { serveAdmin } from './admin-routes.js';
import type { ApiDeps, RouteHandler } from './api-deps.js';
import { auditRoute } from './audit-routes.js';
import { authenticate, bearerToken } from './auth.js';
import { cancelCallRoute, cancelCommandRoute } from './cancel-routes.js';
import { getCallCommandRoute, listRunCommandsRoute } from './command-list.js';
import {
  approveConsentRoute,
  denyConsentRoute,
  listConsentRequestsRoute,
} from './consent-routes.js';
import { CONSOLE_CSP, CONSOLE_HTML } from './console-page.js';
import { dispatchRoute, dispatchStreamRoute } from './dispatch-routes.js';
import { getFileRoute, putFileRoute } from './file-routes.js';
import { ApiError, errorAnswer } from './http-errors.js';
import {
  DISPATCH_BODY_LIMIT_BYTES,
  readJson,
  sendError,
  sendJson,
  sendRefusal,
} from './http-io.js';
import { setRunNetworkRoute } from './network-routes.js';
import { answerParseError } from './parse-refusal.js';
import { portRoute, portUpgrade } from './port-routes.js';
import {
  getProcessRoute,
  listProcessesRoute,
  processOutputRoute,
  processResizeRoute,
  processSignalRoute,
  processStdinRoute,
  processWaitRoute,
  shellRoute,
  startProcessRoute,
} from './process-routes.js';
import {
  artifactContentRoute,
  fleetRoute,
  getArtifactRoute,
  getCommandRoute,
  listArtifactsRoute,
  listWorkspacesRoute,
  meRoute,
} from './read-routes.js';
import { createReadinessProbe } from './readiness.js';
import {
  createRunRoute,
  deleteRunRoute,
  endRunRoute,
  getRunRoute,
  listRunsRoute,
} from './run-routes.js';
import { listOwnTokensRoute, revokeOwnTokenRoute } from './token-routes.js';
import {
  checkpointRoute,
  diffVersionsRoute,
  forkRoute,
  listVersionsRoute,
  manifestRoute,
  removeCheckpointRoute,
  restoreRoute,
} from './version-routes.js';
import {
  getWorkerInvocationRoute,
  killSwitchRoute,
  listWorkerInvocationsRoute,
  listWorkersRoute,
  setWorkerScopeRoute,
} from './worker-routes.js';

interface Route {
  method: string;
  pattern: RegExp;
  handler: RouteHandler;
}

/** One path segment: an id. Ids are printable ASCII without `/`. */
const ID = '([^/]+)';

const ROUTES: Route[] = [
  { method: 'POST', pattern: /^\/v1\/runs$/, handler: createRunRoute },
  { method: 'GET', pattern: /^\/v1\/runs$/, handler: listRunsRoute },
  { method: 'GET', pattern: new RegExp(`^/v1/runs/${ID}$`), handler: getRunRoute },
  { method: 'DELETE', pattern: new RegExp(`^/v1/runs/${ID}$`), handler: deleteRunRoute },
  { method: 'POST', pattern: new RegExp(`^/v1/runs/${ID}/end$`), handler: endRunRoute },
  {
    method: 'PUT',
    pattern: new RegExp(`^/v1/runs/${ID}/network$`),
    handler: setRunNetworkRoute,
  },
  { method: 'PUT', pattern: new RegExp(`^/v1/runs/${ID}/files$`), handler: putFileRoute },
  { method: 'GET', pattern: new RegExp(`^/v1/runs/${ID}/files$`), handler: getFileRoute },
  {
    method: 'GET',
    pattern: new RegExp(`^/v1/runs/${ID}/commands$`),
    handler: listRunCommandsRoute,
  },
  { method: 'POST', pattern: new RegExp(`^/v1/runs/${ID}/processes$`), handler: startProcessRoute },
  { method: 'GET', pattern: new RegExp(`^/v1/runs/${ID}/processes$`), handler: listProcessesRoute },
  {
    method: 'GET',
    pattern: new RegExp(`^/v1/runs/${ID}/processes/${ID}$`),
    handler: getProcessRoute,
  },
  {
    method: 'GET',
    pattern: new RegExp(`^/v1/runs/${ID}/processes/${ID}/output$`),
    handler: processOutputRoute,
  },
  {
    method: 'POST',
    pattern: new RegExp(`^/v1/runs/${ID}/processes/${ID}/stdin$`),
    handler: processStdinRoute,
  },
  {
    method: 'POST',
    pattern: new RegExp(`^/v1/runs/${ID}/processes/${ID}/signal$`),
    handler: processSignalRoute,
  },
  {
    method: 'POST',
    pattern: new RegExp(`^/v1/runs/${ID}/processes/${ID}/wait$`),
    handler: processWaitRoute,
  },
  {
    method: 'POST',
    pattern: new RegExp(`^/v1/runs/${ID}/processes/${ID}/resize$`),
    handler: processResizeRoute,
  },
  { method: 'POST', pattern: new RegExp(`^/v1/runs/${ID}/shell$`), handler: shellRoute },
  { method: 'GET', pattern: new RegExp(`^/v1/runs/${ID}/versions$`), handler: listVersionsRoute },
  { method: 'GET', pattern: new RegExp(`^/v1/runs/${ID}/manifest$`), handler: manifestRoute },
  {
    method: 'GET',
    pattern: new RegExp(`^/v1/runs/${ID}/versions/diff$`),
    handler: diffVersionsRoute,
  },
  { method: 'POST', pattern: new RegExp(`^/v1/runs/${ID}/checkpoints$`), handler: checkpointRoute },
  {
    method: 'DELETE',
    pattern: new RegExp(`^/v1/runs/${ID}/checkpoints/${ID}$`),
    handler: removeCheckpointRoute,
  },
  { method: 'POST', pattern: new RegExp(`^/v1/runs/${ID}/restore$`), handler: restoreRoute },
  { method: 'POST', pattern: new RegExp(`^/v1/runs/${ID}/fork$`), handler: forkRoute },
  ...['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].map((method) => ({
    method,
    pattern: new RegExp(`^/v1/runs/${ID}/ports/(\\d{1,5})(?:/.*)?$`),
    handler: portRoute,
  })),
  { method: 'POST', pattern: /^\/v1\/dispatch$/, handler: dispatchRoute },
  { method: 'POST', pattern: /^\/v1\/dispatch\/stream$/, handler: dispatchStreamRoute },
  { method: 'GET', pattern: new RegExp(`^/v1/commands/${ID}$`), handler: getCommandRoute },
  {
    method: 'POST',
    pattern: new RegExp(`^/v1/commands/${ID}/cancel$`),
    handler: cancelCommandRoute,
  },
  {
    method: 'GET',
    pattern: new RegExp(`^/v1/runs/${ID}/calls/${ID}$`),
    handler: getCallCommandRoute,
  },
  {
    method: 'POST',
    pattern: new RegExp(`^/v1/runs/${ID}/calls/${ID}/cancel$`),
    handler: cancelCallRoute,
  },
  { method: 'GET', pattern: /^\/v1\/workspaces$/, handler: listWorkspacesRoute },
  { method: 'GET', pattern: /^\/v1\/artifacts$/, handler: listArtifactsRoute },
  { method: 'GET', pattern: new RegExp(`^/v1/artifacts/${ID}$`), handler: getArtifactRoute },
  {
    method: 'GET',
    pattern: new RegExp(`^/v1/artifacts/${ID}/content$`),
    handler: artifactContentRoute,
  },
  { method: 'GET', pattern: /^\/v1\/fleet\/workbenches$/, handler: fleetRoute },
  { method: 'GET', pattern: /^\/v1\/audit$/, handler: auditRoute },
  { method: 'GET', pattern: /^\/v1\/tokens$/, handler: listOwnTokensRoute },
  { method: 'DELETE', pattern: new RegExp(`^/v1/tokens/${ID}$`), handler: revokeOwnTokenRoute },
  { method: 'GET', pattern: /^\/v1\/me$/, handler: meRoute },
  { method: 'GET', pattern: /^\/v1\/workers$/, handler: listWorkersRoute },
  { method: 'POST', pattern: /^\/v1\/workers\/kill-switch$/, handler: killSwitchRoute },
  {
    method: 'PUT',
    pattern: new RegExp(`^/v1/workers/${ID}/scope$`),
    handler: setWorkerScopeRoute,
  },
  { method: 'GET', pattern: /^\/v1\/consent-requests$/, handler: listConsentRequestsRoute },
  {
    method: 'POST',
    pattern: new RegExp(`^/v1/consent-requests/${ID}/approve$`),
    handler: approveConsentRoute,
  },
  {
    method: 'POST',
    pattern: new RegExp(`^/v1/consent-requests/${ID}/deny$`),
    handler: denyConsentRoute,
  },
  { method: 'GET', pattern: /^\/v1\/worker-invocations$/, handler: listWorkerInvocationsRoute },
  {
    method: 'GET',
    pattern: new RegExp(`^/v1/worker-invocations/${ID}$`),
    handler: getWorkerInvocationRoute,
  },
];

/** Finds the route of a request: the handler and its decoded path parameters. */
export function matchRoute(
  method: string,
  path: string,
): { handler: RouteHandler; params: string[] } | { allowed: string[] } | null {
  const allowed: string[] = [];
  for (const route of ROUTES) {
    const m = route.pattern.exec(path);
    if (!m) continue;
    if (route.method !== method) {
      allowed.push(route.method);
      continue;
    }
    try {
      return { handler: route.handler, params: m.slice(1).map((p) => decodeURIComponent(p)) };
    } catch {
      return null;
    }
  }
  return allowed.length > 0 ? { allowed } : null;
}

/**
 * `/mcp`: authenticated like `/v1`, then one stateless MCP exchange. Only POST: a
 * stateless server offers no standalone event stream (GET) and no session to end
 * (DELETE).
 */
async function serveMcp(deps: ApiDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const caller = await authenticate(deps.db, req);
  if (req.method !== 'POST') {
    res.setHeader('allow', 'POST');
    throw new ApiError(
      'invalid_arguments',
      `invalid_arguments: ${req.method} is not allowed on /mcp; MCP messages are POSTed (the server is stateless)`,
      { status: 405 },
    );
  }
  const body = await readJson(req, DISPATCH_BODY_LIMIT_BYTES);
  await serveMcpHttp(req, res, body, {
    token: bearerToken(req.headers.authorization)!,
    userId: caller.userId,
  });
}

async function serveMetrics(deps: ApiDeps, res: ServerResponse): Promise<void> {
  const body = deps.metrics ? await deps.metrics.metrics() : '';
  res.writeHead(200, {
    'content-type': deps.metrics?.contentType ?? 'text/plain; version=0.0.4; charset=utf-8',
  });
  res.end(body);
}

function serveConsole(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': CONSOLE_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
  });
  res.end(CONSOLE_HTML);
}

/** The request handler of the API server (exported for tests that mount it themselves). */
export function createApiHandler(deps: ApiDeps) {
  const log = deps.log.child({ component: 'api' });
  const readiness = createReadinessProbe({
    db: deps.db,
    fleet: deps.fleet,
    localFallback: deps.localFallback ?? false,
    log,
  });
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = req.method ?? 'GET';
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://api.invalid');
    } catch {
      sendError(res, new ApiError('invalid_arguments', 'invalid_arguments: bad request URL'));
      return;
    }
    const path = url.pathname;
    try {
      if (method === 'GET' && path === '/healthz') return sendJson(res, 200, { ok: true });
      if (method === 'GET' && path === '/readyz') {
        const answer = await readiness();
        return sendJson(res, answer.ready ? 200 : 503, answer);
      }
      if (method === 'GET' && path === '/metrics') return await serveMetrics(deps, res);
      if (method === 'GET' && (path === '/console' || path === '/console/')) {
        return serveConsole(res);
      }
      if (method === 'GET' && path === '/') {
        res.writeHead(302, { location: '/console' }).end();
        return;
      }
      if (path === '/mcp') return await serveMcp(deps, req, res);
      if (path.startsWith('/v1/admin/')) {
        return await serveAdmin(deps, req, res, path, url.searchParams, log);
      }
      if (!path.startsWith('/v1/')) {
        throw new ApiError('not_found', `not_found: no route ${method} ${path}`);
      }
      // Authenticate before looking at the route or the body: unauthenticated callers
      // learn nothing, not even which routes exist.
      const caller = await authenticate(deps.db, req);
      const match = matchRoute(method, path);
      if (match === null) {
        throw new ApiError('not_found', `not_found: no route ${method} ${path}`);
      }
      if ('allowed' in match) {
        res.setHeader('allow', match.allowed.join(', '));
        throw new ApiError(
          'invalid_arguments',
          `invalid_arguments: ${method} is not allowed on ${path}; use ${match.allowed.join(' or ')}`,
          { status: 405 },
        );
      }
      await match.handler({
        deps,
        caller,
        req,
        res,
        params: match.params,
        query: url.searchParams,
        log: log.child({ userId: caller.userId }),
      });
    } catch (err) {
      const answer = errorAnswer(err);
      if (answer.body.errorCode === 'internal') {
        log.error({ err, method, path }, 'API request failed');
      }
      sendRefusal(res, answer.body, answer.status);
    }
  };
}

/** A running API server. */
export interface ApiServer {
  /** Base URL, e.g. `http://127.0.0.1:8080`. */
  readonly url: string;
  /** The address it listens on (the real port when 0 was asked for). */
  readonly address: ListenAddress;
  /** Stops listening and closes open connections (running streams are cut, cancelling their calls). */
  close(): Promise<void>;
}

/** Starts the API on `listen` (port 0 picks a free port); resolves once it listens. */
export async function startApiServer(deps: ApiDeps, listen: ListenAddress): Promise<ApiServer> {
  const handler = createApiHandler(deps);
  const server = createServer((req, res) => {
    void handler(req, res);
  });
  server.requestTimeout = 0;
  server.on('clientError', answerParseError);
  // A WebSocket to a run's port; any other upgrade is refused.
  server.on('upgrade', (req, socket, head) => void portUpgrade(deps, req, socket, head));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const info = server.address() as AddressInfo;
  const host = info.family === 'IPv6' ? `[${info.address}]` : info.address;
  return {
    url: `http://${host}:${info.port}`,
    address: { host: info.address, port: info.port },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
