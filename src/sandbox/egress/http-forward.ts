/**
 * Plain HTTP through the proxy: an absolute-URI request (`GET http://host/path`) is
 * checked on its own (policy, one resolution, every address), its Host header must
 * name the URL's host, and it is sent on a new connection to the checked address with
 * the URL's host as its Host. Each request is one reported connection, even when the
 * client keeps its proxy connection alive for the next.
 *
 * Secrets are never added here: a secret travels only inside TLS the proxy verified
 * (`tls-intercept.ts`), never in clear text.
 *
 * @module
 */

import { type IncomingMessage, request, type ServerResponse } from 'node:http';
import { endToEndHeaders, endToEndRaw } from './hop-headers.js';
import { pinnedLookup } from './pinned-lookup.js';
import { answerRefusal } from './refusal-answer.js';
import { hostHeaderAgrees, isBadTarget, parseAbsoluteHttp } from './request-target.js';
import type { RunContext } from './run-context.js';
import { checkName, checkTarget } from './target-check.js';

/** Serves one plain request on a run's endpoint. */
export async function forwardHttp(
  run: RunContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const target = parseAbsoluteHttp(req.url ?? '');
  const tally = isBadTarget(target)
    ? run.tally(target.shown, 0)
    : run.tally(target.host, target.port);
  res.once('close', () => tally.finish());
  const refuse = (refusal: Parameters<typeof answerRefusal>[1]) => {
    if (res.destroyed || res.writableEnded) return; // the client is gone: nothing to refuse
    tally.refuse(refusal);
    answerRefusal(res, refusal, run.runId);
    req.resume(); // drain a body nobody will read, so the connection can serve the next request
  };
  if (isBadTarget(target)) {
    refuse({ host: target.shown, port: 0, reason: 'bad_request', detail: target.problem });
    return;
  }
  const policy = run.policy();
  // The name first: an address or a name the run may not reach is the better answer.
  const named = checkName(policy, target.host, target.port);
  if (!named.ok) {
    refuse(named.refusal);
    return;
  }
  const hostHeader = req.headers.host;
  if (hostHeader !== undefined && !hostHeaderAgrees(hostHeader, target.host, target.port, 80)) {
    refuse({
      host: target.host,
      port: target.port,
      reason: 'host_mismatch',
      detail: `the Host header names ${JSON.stringify(hostHeader).slice(0, 100)}, not the URL's host`,
    });
    return;
  }
  const decision = await checkTarget(
    policy,
    target.host,
    target.port,
    run.options.resolve,
    run.options.allowPrivate,
  );
  if (!decision.allowed) {
    refuse(decision.refusal);
    return;
  }
  const { host, port, addresses } = decision.target;
  const headers = endToEndHeaders(req.rawHeaders, ['host']);
  headers.host = port === 80 ? host : `${host}:${port}`;
  const upstream = request({
    host,
    port,
    method: req.method,
    path: target.path,
    headers,
    setHost: false,
    agent: false, // a fresh connection to the address checked for this request
    lookup: pinnedLookup(host, addresses),
  });
  upstream.once('socket', (socket) => {
    tally.track(socket);
    socket.once('connect', () => {
      tally.address = socket.remoteAddress;
    });
  });
  upstream.once('response', (up) => {
    res.writeHead(up.statusCode ?? 502, up.statusMessage, endToEndRaw(up.rawHeaders));
    up.pipe(res);
  });
  upstream.once('error', (err) => {
    const code = (err as NodeJS.ErrnoException).code;
    refuse({
      host,
      port,
      reason: 'upstream_failed',
      detail: `${host}:${port} could not be reached${code === undefined ? '' : ` (${code})`}`,
    });
  });
  // The client going away ends the upstream request too.
  res.once('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
}
