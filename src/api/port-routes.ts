/**
 * `/v1/runs/:runId/ports/:port/...`: a port a run's background process listens on, for
 * the run's owner only, over HTTP and WebSocket. The request (any method, the path
 * after the port, the query, the body) goes to `127.0.0.1:<port>` inside the run's
 * sandbox over a connection its agent carries, so the sandbox still has no network
 * interface; the answer comes back as the server gave it. The caller's `Authorization`
 * never reaches the server. A port nothing listens on is `502 port_not_listening`; a run
 * that is not the caller's is `404`.
 *
 * The connection is opened where the run's processes are: the workbench of this process
 * (the local node), or the replica holding the run's workspace, over a tunnel of the
 * mesh stream (`src/agent/port-opener.ts`).
 *
 * @module
 */

import { type IncomingMessage, request } from 'node:http';
import type { Duplex } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { WorkbenchError } from '../contract/index.js';
import type { ApiDeps, RouteContext } from './api-deps.js';
import { authenticate, type Caller } from './auth.js';
import { ApiError, errorAnswer, rawRefusal } from './http-errors.js';
import { runMissing } from './run-calls.js';

/** The path of a port route: run id, port, and the rest (with its query). */
const PORT_PATH = /^\/v1\/runs\/([^/]+)\/ports\/(\d{1,5})(\/[^?]*)?(\?.*)?$/;

/** Headers a hop does not pass on, and the caller's credential. */
const DROPPED = new Set([
  'authorization',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'host',
]);

/** The run, port and forwarded path of a port route's URL; null when it is none. */
export function portTarget(url: string): { runId: string; port: number; path: string } | null {
  const m = PORT_PATH.exec(url);
  if (!m) return null;
  const port = Number(m[2]);
  let runId: string;
  try {
    runId = decodeURIComponent(m[1]!);
  } catch {
    return null;
  }
  if (port < 1 || port > 65535) return null;
  return { runId, port, path: `${m[3] ?? '/'}${m[4] ?? ''}` };
}

/** The connection to the run's port, or the refusal to answer. */
async function open(deps: ApiDeps, caller: Caller, runId: string, port: number): Promise<Duplex> {
  if (!deps.openPort) {
    throw new ApiError(
      'unavailable',
      'unavailable: this agent node reaches no workbench whose ports it can open; use exec with curl against 127.0.0.1 in the run instead',
    );
  }
  try {
    return await deps.openPort(runId, port, caller.authority);
  } catch (err) {
    if (err instanceof WorkbenchError && err.code === 'not_found') {
      throw new ApiError('not_found', runMissing(runId));
    }
    throw err;
  }
}

function forwardedHeaders(req: IncomingMessage, port: number): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && !DROPPED.has(name)) headers[name] = value;
  }
  headers.host = `127.0.0.1:${port}`;
  return headers;
}

/** Any method on `/v1/runs/:runId/ports/:port/...`: the request, forwarded. */
export async function portRoute(ctx: RouteContext): Promise<void> {
  const target = portTarget(ctx.req.url ?? '');
  if (target === null) {
    throw new ApiError('not_found', 'not_found: expected /v1/runs/:runId/ports/:port/...');
  }
  // The opener checks the run's owner (not_found) before it connects.
  const conn = await open(ctx.deps, ctx.caller, target.runId, target.port);
  const upstream = request({
    createConnection: () => conn,
    method: ctx.req.method ?? 'GET',
    path: target.path,
    headers: { ...forwardedHeaders(ctx.req, target.port), connection: 'close' },
  });
  const answered = new Promise<IncomingMessage>((resolve, reject) => {
    upstream.once('response', resolve);
    upstream.once('error', reject);
  });
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) upstream.destroy();
  });
  await pipeline(ctx.req, upstream).catch(() => undefined);
  let answer: IncomingMessage;
  try {
    answer = await answered;
  } catch (err) {
    throw new ApiError(
      'port_not_listening',
      `port_not_listening: the server on port ${target.port} closed the connection without an answer (${(err as Error).message})`,
    );
  }
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value !== undefined && name !== 'connection' && name !== 'keep-alive') {
      headers[name] = value;
    }
  }
  ctx.res.writeHead(answer.statusCode ?? 502, answer.statusMessage, headers);
  await pipeline(answer, ctx.res).catch(() => ctx.res.destroy());
}

/**
 * An `Upgrade` request (a WebSocket) to a port route: authenticated and checked as the
 * route is, then the upgrade request goes to the server and the two connections are
 * joined, byte for byte, both ways. A refusal is answered as HTTP and the socket closed.
 */
export async function portUpgrade(
  deps: ApiDeps,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): Promise<void> {
  try {
    const target = portTarget(req.url ?? '');
    if (target === null) throw new ApiError('not_found', `not_found: no route ${req.url}`);
    const caller = await authenticate(deps.db, req);
    const conn = await open(deps, caller, target.runId, target.port);
    const lines = [`${req.method ?? 'GET'} ${target.path} HTTP/1.1`];
    for (const [name, value] of Object.entries(forwardedHeaders(req, target.port))) {
      for (const v of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${v}`);
    }
    lines.push('connection: Upgrade', `upgrade: ${req.headers.upgrade ?? 'websocket'}`);
    conn.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length > 0) conn.write(head);
    socket.on('error', () => conn.destroy());
    conn.on('error', () => socket.destroy());
    socket.pipe(conn);
    conn.pipe(socket);
  } catch (err) {
    const { status, body } = errorAnswer(err);
    socket.end(rawRefusal(status, body.errorCode, body));
  }
}
