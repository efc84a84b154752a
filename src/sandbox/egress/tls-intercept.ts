/**
 * TLS terminated by the proxy, for exactly the hosts of the secrets a run opted into:
 * the sandbox's TLS ends here with a leaf certificate for the host signed by the node
 * CA, each HTTP/1.1 request read from it gets the secret's header (replacing any the
 * client sent), and goes on over the proxy's own TLS to the checked address, the
 * upstream certificate verified for the host name. The secret's value is written into
 * upstream requests and nowhere else: not into a response, a log line, an error or a
 * report (a response header that carries it is dropped, in case a server echoes it).
 *
 * @module
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Agent, request } from 'node:https';
import type { Socket } from 'node:net';
import { rootCertificates, TLSSocket } from 'node:tls';
import type { ConnectionTally } from './connection-tally.js';
import type { EgressSecret } from './egress-types.js';
import { endToEndHeaders, endToEndRaw } from './hop-headers.js';
import type { LeafCertificates } from './leaf-certs.js';
import { pinnedLookup } from './pinned-lookup.js';
import { answerRefusal } from './refusal-answer.js';
import { hostHeaderAgrees } from './request-target.js';
import type { AllowedTarget } from './target-check.js';

/** A tunnel handed to the interceptor, its ClientHello read and judged. */
export interface InterceptedTunnel {
  /** The run the tunnel is for (only its id: a refusal names it). */
  readonly run: { readonly runId: string };
  /** The client's socket, paused, with `hello` read from it. */
  readonly socket: Socket;
  readonly hello: Buffer;
  readonly target: AllowedTarget;
  readonly secrets: readonly EgressSecret[];
  readonly tally: ConnectionTally;
}

interface Session {
  readonly tunnel: InterceptedTunnel;
  /** One upstream connection at a time, kept alive, dialled only to checked addresses. */
  readonly agent: Agent;
}

/** Terminates TLS for secret hosts; one per proxy. */
export class TlsInterceptor {
  private readonly sessions = new WeakMap<Socket, Session>();
  /** Parses the requests of every intercepted connection; it never listens. */
  private readonly http: Server;
  private readonly ca: string[] | undefined;

  constructor(
    private readonly leaves: LeafCertificates,
    upstreamCa: readonly string[] | undefined,
  ) {
    // Without extra CAs Node's defaults apply (bundled roots and NODE_EXTRA_CA_CERTS);
    // giving `ca` replaces them, so the bundled roots are named alongside.
    this.ca =
      upstreamCa && upstreamCa.length > 0 ? [...rootCertificates, ...upstreamCa] : undefined;
    this.http = createServer((req, res) => this.forward(req, res));
  }

  /** Takes over a tunnel: answers its TLS and serves its requests until it closes. */
  take(tunnel: InterceptedTunnel): void {
    const { socket, hello, target, tally, secrets } = tunnel;
    tally.secret = secrets.map((s) => s.name).join(',');
    this.leaves.contextFor(target.host).then(
      (secureContext) => {
        if (socket.destroyed) return;
        socket.unshift(hello);
        const tls = new TLSSocket(socket, {
          isServer: true,
          secureContext,
          ALPNProtocols: ['http/1.1'], // the requests are read as HTTP/1.1
        });
        const agent = new Agent({
          keepAlive: true,
          maxSockets: 1,
          lookup: pinnedLookup(target.host, target.addresses),
          ...(this.ca === undefined ? {} : { ca: this.ca }),
        });
        this.sessions.set(tls, { tunnel, agent });
        tls.on('error', () => tls.destroy());
        tls.once('close', () => {
          agent.destroy();
          socket.destroy();
        });
        this.http.emit('connection', tls);
      },
      () => socket.destroy(),
    );
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    const session = this.sessions.get(req.socket as Socket);
    if (session === undefined) {
      res.destroy();
      return;
    }
    const { run, target, secrets, tally } = session.tunnel;
    const { host, port } = target;
    const refuse = (
      reason: 'host_mismatch' | 'bad_request' | 'upstream_failed',
      detail: string,
    ) => {
      if (res.destroyed || res.writableEnded) return;
      tally.refuse({ host, port, reason, detail });
      answerRefusal(res, { host, port, reason, detail }, run.runId);
      req.resume();
    };
    const hostHeader = req.headers.host;
    if (hostHeader !== undefined && !hostHeaderAgrees(hostHeader, host, port, 443)) {
      refuse('host_mismatch', `the Host header names another host than ${host}`);
      return;
    }
    if (!(req.url ?? '').startsWith('/')) {
      refuse('bad_request', 'a request inside the tunnel names a path (GET /path)');
      return;
    }
    const dropped = ['host', ...secrets.map((s) => s.header.toLowerCase())];
    const headers = endToEndHeaders(req.rawHeaders, dropped);
    headers.host = port === 443 ? host : `${host}:${port}`;
    for (const s of secrets) headers[s.header.toLowerCase()] = s.value;
    const upstream = request({
      host,
      port,
      method: req.method,
      path: req.url,
      headers,
      setHost: false,
      servername: host,
      agent: session.agent,
    });
    upstream.once('socket', (socket) => {
      tally.track(socket);
      if (tally.address === undefined) {
        socket.once('connect', () => {
          tally.address = socket.remoteAddress;
        });
      }
    });
    upstream.once('response', (up) => {
      const values = secrets.map((s) => s.value);
      const clean = endToEndRaw(up.rawHeaders, (_n, v) => !values.some((x) => v.includes(x)));
      res.writeHead(up.statusCode ?? 502, up.statusMessage, clean);
      up.pipe(res);
    });
    upstream.once('error', (err) => {
      // The message names the failure (a certificate that did not verify, a refused
      // connection), never the request: its headers hold the secret.
      const code = (err as NodeJS.ErrnoException).code;
      refuse(
        'upstream_failed',
        `${host}:${port} could not be reached${code === undefined ? '' : ` (${code})`}`,
      );
    });
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }

  /** Stops parsing: the intercepted connections belong to their endpoints, which end them. */
  close(): void {
    this.http.close();
  }
}
