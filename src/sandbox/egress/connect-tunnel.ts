/**
 * `CONNECT host:port`: the host is checked (policy, one resolution, every address),
 * the checked address is dialled before the client hears `200`, so an unreachable host
 * is a `502` it can read; then the client's ClientHello must name the same host (or
 * none) before a byte reaches the destination. After that the tunnel is a plain byte
 * pipe: the proxy never sees inside another host's TLS. For a host one of the run's
 * secrets covers, the tunnel goes to the TLS interceptor instead.
 *
 * Only TLS is carried: a tunnel whose first bytes are not a ClientHello is refused,
 * because a clear-text protocol inside it would escape the Host and SNI checks.
 *
 * @module
 */

import type { IncomingMessage } from 'node:http';
import { connect, Socket } from 'node:net';
import { normalizeHostName } from '../../contract/index.js';
import { type ClientHelloRead, readClientHello } from './client-hello-read.js';
import type { ConnectionTally } from './connection-tally.js';
import { pinnedLookup } from './pinned-lookup.js';
import type { Refusal } from './refusal.js';
import { refuseSocket, TLS_ACCESS_DENIED } from './refusal-answer.js';
import { parseAuthority } from './request-target.js';
import type { RunContext } from './run-context.js';
import { secretsFor } from './secret-match.js';
import { type AllowedTarget, checkTarget, printable } from './target-check.js';

const ESTABLISHED = 'HTTP/1.1 200 Connection established\r\n\r\n';
const DEFAULT_HELLO_TIMEOUT_MS = 30_000;

/** Serves one CONNECT on a run's endpoint; `socket` is the client's, handed over by the HTTP server. */
export async function openTunnel(
  run: RunContext,
  req: IncomingMessage,
  socket: Socket,
  head: Buffer,
): Promise<void> {
  socket.on('error', () => socket.destroy());
  const parsed = parseAuthority(req.url ?? '', null);
  const tally =
    'problem' in parsed
      ? run.tally(printable(req.url ?? ''), 0)
      : run.tally(parsed.host, parsed.port);
  socket.once('close', () => tally.finish());
  if ('problem' in parsed) {
    refuseBeforeTunnel(run, socket, tally, {
      host: printable(req.url ?? '') || '(none)',
      port: 0,
      reason: 'bad_request',
      detail: parsed.problem,
    });
    return;
  }
  const policy = run.policy();
  const decision = await checkTarget(
    policy,
    parsed.host,
    parsed.port,
    run.options.resolve,
    run.options.allowPrivate,
  );
  if (!decision.allowed) {
    refuseBeforeTunnel(run, socket, tally, decision.refusal);
    return;
  }
  const target = decision.target;
  const secrets = secretsFor(run.options.secrets, policy, target.host, target.port);
  if (secrets.length > 0) {
    socket.write(ESTABLISHED);
    const hello = await checkedHello(run, socket, head, target, tally);
    if (hello === null) return;
    run.interceptor.take({ run, socket, hello: hello.bytes, target, secrets, tally });
    return;
  }
  const upstream = await dial(target, tally);
  if (!(upstream instanceof Socket)) {
    refuseBeforeTunnel(run, socket, tally, upstream);
    return;
  }
  if (socket.destroyed) {
    upstream.destroy();
    return;
  }
  socket.write(ESTABLISHED);
  const hello = await checkedHello(run, socket, head, target, tally);
  if (hello === null) {
    upstream.destroy();
    return;
  }
  upstream.write(hello.bytes);
  splice(socket, upstream);
}

/** Dials the checked addresses (never DNS); the socket, or the refusal to answer. */
function dial(target: AllowedTarget, tally: ConnectionTally): Promise<Socket | Refusal> {
  return new Promise((resolve) => {
    const upstream = connect({
      host: target.host,
      port: target.port,
      lookup: pinnedLookup(target.host, target.addresses),
      noDelay: true,
    });
    tally.track(upstream);
    const onError = (err: NodeJS.ErrnoException) => {
      upstream.destroy();
      resolve({
        host: target.host,
        port: target.port,
        reason: 'upstream_failed',
        detail: `${target.host}:${target.port} could not be reached${err.code === undefined ? '' : ` (${err.code})`}`,
      });
    };
    upstream.once('error', onError);
    upstream.once('connect', () => {
      upstream.off('error', onError);
      upstream.on('error', () => upstream.destroy());
      tally.address = upstream.remoteAddress;
      resolve(upstream);
    });
  });
}

/**
 * Reads the ClientHello and judges its server name against the CONNECT host. A
 * refusal here is sent as a TLS alert: the client has already switched to TLS.
 * Returns null when the tunnel ends here.
 */
async function checkedHello(
  run: RunContext,
  socket: Socket,
  head: Buffer,
  target: AllowedTarget,
  tally: ConnectionTally,
): Promise<ClientHelloRead | null> {
  const timeout = run.options.helloTimeoutMs ?? DEFAULT_HELLO_TIMEOUT_MS;
  const hello = await readClientHello(socket, head, timeout);
  const { peek } = hello;
  if (peek.kind === 'closed') {
    socket.destroy();
    return null;
  }
  let refusal: Refusal | null = null;
  const at = { host: target.host, port: target.port };
  if (peek.kind === 'not_tls' || peek.kind === 'timeout') {
    const why =
      peek.kind === 'timeout'
        ? 'no TLS ClientHello came'
        : 'the tunnel did not start with a TLS ClientHello';
    refusal = { ...at, reason: 'not_tls', detail: why };
  } else if (peek.kind === 'malformed') {
    refusal = {
      ...at,
      reason: 'not_tls',
      detail: `the TLS ClientHello is malformed: ${peek.problem}`,
    };
  } else if (peek.kind === 'hello' && peek.serverName !== null) {
    if (normalizeHostName(peek.serverName) !== target.host) {
      refusal = {
        ...at,
        reason: 'sni_mismatch',
        detail: `the TLS server name ${printable(peek.serverName)} is not the CONNECT host ${target.host}`,
      };
    }
  }
  if (refusal === null) return hello;
  tally.refuse(refusal);
  if (peek.kind === 'hello' || peek.kind === 'malformed') socket.end(TLS_ACCESS_DENIED);
  else socket.end();
  socket.destroySoon();
  return null;
}

function refuseBeforeTunnel(
  run: RunContext,
  socket: Socket,
  tally: ConnectionTally,
  refusal: Refusal,
): void {
  tally.refuse(refusal);
  refuseSocket(socket, refusal, run.runId);
}

/**
 * Pipes both ways. An end travels as an end (the pipe ends the other side once its
 * data is written); a side that closes lets the other finish writing and close
 * (`destroySoon`); a failure destroys both.
 */
function splice(a: Socket, b: Socket): void {
  a.pipe(b);
  b.pipe(a);
  const fail = () => {
    a.destroy();
    b.destroy();
  };
  a.on('error', fail);
  b.on('error', fail);
  a.once('close', () => b.destroySoon());
  b.once('close', () => a.destroySoon());
}
