/**
 * One run's endpoint: an HTTP proxy on a Unix socket (bound into the run's sandbox),
 * serving absolute-URI requests (`http-forward.ts`) and CONNECT (`connect-tunnel.ts`)
 * with the run's policy read at each new connection, and keeping the run's refusals
 * for `refusedSince`. A malformed request gets a `400` and its connection is closed;
 * the server goes on serving the others.
 *
 * @module
 */

import { chmod, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { EgressPolicy } from '../../contract/index.js';
import { openTunnel } from './connect-tunnel.js';
import { ConnectionTally } from './connection-tally.js';
import type {
  EgressConnection,
  EgressEndpoint,
  EgressProxyOptions,
  RefusedHost,
} from './egress-types.js';
import { forwardHttp } from './http-forward.js';
import { refusalResponse } from './refusal.js';
import { RefusalLog } from './refusal-log.js';
import type { RunContext } from './run-context.js';
import type { TlsInterceptor } from './tls-intercept.js';

const DEFAULT_MAX_CONNECTIONS = 256;

/** A run's endpoint, shared by the commands that opened it (closed when the last one closes). */
export class RunEndpoint {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly refusals = new RefusalLog();
  private opens = 0;
  private closing: Promise<void> | null = null;
  private readonly run: RunContext;

  constructor(
    readonly runId: string,
    readonly socketPath: string,
    readonly caCertPath: string,
    private policy: () => EgressPolicy,
    private readonly options: EgressProxyOptions,
    interceptor: TlsInterceptor,
    private readonly onClosing: (done: Promise<void>) => void,
  ) {
    this.run = {
      runId,
      policy: () => this.policy(),
      options,
      interceptor,
      tally: (host, port) =>
        new ConnectionTally(runId, host, port, {
          refused: (r) => this.refusals.add({ host: r.host, port: r.port, reason: r.reason }),
          finished: (c) => this.report(c),
        }),
    };
    this.server = createServer({ keepAliveTimeout: 30_000 });
    this.server.maxConnections = options.maxConnectionsPerRun ?? DEFAULT_MAX_CONNECTIONS;
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.server.on('request', (req, res) => {
      forwardHttp(this.run, req, res).catch((err) => this.failed(err, () => res.destroy()));
    });
    this.server.on('connect', (req, socket: Socket, head: Buffer) => {
      openTunnel(this.run, req, socket, head).catch((err) =>
        this.failed(err, () => socket.destroy()),
      );
    });
    this.server.on('clientError', (err, socket) => {
      // Not HTTP, or HTTP the parser refuses: say so if the socket can still hear it.
      if (socket.writable && !(err as NodeJS.ErrnoException).code?.startsWith('ECONNRESET')) {
        socket.end(
          refusalResponse(
            {
              host: '(none)',
              port: 0,
              reason: 'bad_request',
              detail: 'the request is not HTTP/1.1 the proxy can read',
            },
            runId,
          ),
        );
      }
      socket.destroy();
    });
  }

  /** Starts listening (a socket left by a previous process is replaced). */
  async listen(): Promise<void> {
    await rm(this.socketPath, { force: true });
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.socketPath, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    // The sandbox's user may not be the node's; the directory (0700) keeps others out.
    await chmod(this.socketPath, 0o666);
  }

  /** A handle for one opener; `policy` becomes the policy read for new connections. */
  open(policy: () => EgressPolicy): EgressEndpoint {
    if (this.closing !== null) throw new Error('egress: the endpoint is closing');
    this.policy = policy;
    this.opens += 1;
    let closed = false;
    return {
      socketPath: this.socketPath,
      caCertPath: this.caCertPath,
      mark: () => this.refusals.mark(),
      refusedSince: (mark: number): RefusedHost[] => this.refusals.since(mark),
      close: async () => {
        if (closed) return;
        closed = true;
        this.opens -= 1;
        if (this.opens === 0) await this.close();
      },
    };
  }

  /** Whether the endpoint has begun closing (a new opener must start another). */
  get isClosing(): boolean {
    return this.closing !== null;
  }

  /** Stops serving and ends every connection. */
  close(): Promise<void> {
    if (this.closing === null) {
      this.closing = this.shutdown();
      this.onClosing(this.closing);
    }
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    const stopped = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await stopped;
    await rm(this.socketPath, { force: true });
  }

  private report(c: EgressConnection): void {
    const log = this.options.log;
    if (c.allowed) log.debug({ egress: c }, 'egress connection');
    else log.info({ egress: c }, 'egress refused');
    try {
      this.options.onConnection?.(c);
    } catch (err) {
      log.warn({ err }, 'egress onConnection threw');
    }
  }

  private failed(err: unknown, cut: () => void): void {
    this.options.log.warn({ err, runId: this.runId }, 'egress handler failed');
    cut();
  }
}
