/**
 * What the egress proxy tests share: a test CA made with the `openssl` command (so the
 * upstream side is independent of the proxy's own certificate code), loopback HTTP and
 * HTTPS servers standing in for the internet, a proxy with a resolver map, a TCP bridge
 * to a run's socket (as the sandbox has), and clients that speak to the socket.
 */

import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import {
  createServer as createHttpServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type RequestListener,
  type Server,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createConnection, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { type PeerCertificate, type TLSSocket, connect as tlsConnect } from 'node:tls';
import { promisify } from 'node:util';
import pino from 'pino';
import {
  type CidrRange,
  cidr,
  type EgressPolicy,
  type HostRule,
  parseHostRule,
} from '../../../src/contract/index.js';
import {
  type EgressConnection,
  type EgressEndpoint,
  EgressProxy,
  type EgressProxyOptions,
  type EgressSecret,
} from '../../../src/sandbox/egress/index.js';

const run = promisify(execFile);

/** A scratch directory removed by the returned cleanup. */
export async function scratch(prefix: string): Promise<{ dir: string; done: () => Promise<void> }> {
  // Short: socket paths live under it.
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, done: () => rm(dir, { recursive: true, force: true }) };
}

/** A CA and one server certificate for `names`, made by openssl. */
export interface TestPki {
  readonly caPem: string;
  readonly key: string;
  readonly cert: string;
}

/** Makes a test CA and a server certificate signed by it for `names`. */
export async function makeTestPki(dir: string, names: readonly string[]): Promise<TestPki> {
  const p = (n: string) => join(dir, n);
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    p('ca.key'),
    '-out',
    p('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=egress test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  await run('openssl', [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    p('srv.key'),
    '-out',
    p('srv.csr'),
    '-subj',
    `/CN=${names[0]}`,
  ]);
  await writeFile(
    p('ext.cnf'),
    `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\nextendedKeyUsage=serverAuth\n`,
  );
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    p('srv.csr'),
    '-CA',
    p('ca.pem'),
    '-CAkey',
    p('ca.key'),
    '-CAcreateserial',
    '-out',
    p('srv.pem'),
    '-days',
    '2',
    '-extfile',
    p('ext.cnf'),
  ]);
  const [caPem, key, cert] = await Promise.all(
    ['ca.pem', 'srv.key', 'srv.pem'].map((n) => readFile(p(n), 'utf8')),
  );
  return { caPem: caPem!, key: key!, cert: cert! };
}

/** One request a loopback server received. */
export interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The local address the connection came in on (which server address was dialled). */
  readonly localAddress: string;
}

/** A loopback server and what it received. */
export interface Upstream {
  readonly port: number;
  readonly seen: Seen[];
  /** Connections accepted, whatever came on them. */
  connections: number;
  close(): Promise<void>;
}

/** The routes every loopback server serves. */
export function upstreamRoutes(seen: Seen[], bigBytes = 0): RequestListener {
  const big = Buffer.alloc(bigBytes, 0x61);
  return (req, res) => {
    seen.push({
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      localAddress: req.socket.localAddress ?? '',
    });
    req.resume();
    if (req.url === '/big') {
      res.writeHead(200, { 'content-length': big.length });
      res.end(big);
    } else if (req.url === '/echo-auth') {
      // A careless server echoing a credential in a header: the proxy must not pass it on.
      res.writeHead(200, { 'x-echo': String(req.headers.authorization ?? '') });
      res.end('echoed in a header\n');
    } else if (req.url === '/redirect') {
      res.writeHead(302, { location: 'http://refused.test/next' });
      res.end();
    } else {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`hello from ${req.headers.host}\n`);
    }
  };
}

async function listening(server: Server, host: string, seenList: Seen[]): Promise<Upstream> {
  const up = {
    port: 0,
    seen: seenList,
    connections: 0,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  server.on('connection', () => {
    up.connections += 1;
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  up.port = (server.address() as AddressInfo).port;
  return up;
}

/** An HTTPS server on `host` (loopback) with the test certificate. */
export function startHttpsUpstream(
  pki: TestPki,
  host = '127.0.0.1',
  bigBytes = 0,
): Promise<Upstream> {
  const seen: Seen[] = [];
  const server = createHttpsServer(
    { key: pki.key, cert: pki.cert },
    upstreamRoutes(seen, bigBytes),
  );
  return listening(server, host, seen);
}

/** A plain HTTP server on `host` (loopback). */
export function startHttpUpstream(host = '127.0.0.1', bigBytes = 0): Promise<Upstream> {
  const seen: Seen[] = [];
  const server = createHttpServer(upstreamRoutes(seen, bigBytes));
  return listening(server, host, seen);
}

/** The proxy's resolver, from a map: a value is the answer, or a function of the call count. */
export type ResolverMap = Record<string, string[] | ((call: number) => string[])>;

/** A resolver over `map`, counting calls per name. */
export function mapResolver(map: ResolverMap): {
  resolve: (host: string) => Promise<string[]>;
  calls: Map<string, number>;
} {
  const calls = new Map<string, number>();
  return {
    calls,
    resolve: async (host) => {
      const n = (calls.get(host) ?? 0) + 1;
      calls.set(host, n);
      const entry = map[host];
      if (entry === undefined) {
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      }
      return typeof entry === 'function' ? entry(n) : entry;
    },
  };
}

/** Host rules from text (`pkgs.test:8443`, `*.test`). */
export function rules(...texts: string[]): HostRule[] {
  return texts.map((text) => {
    const parsed = parseHostRule(text);
    if (!parsed.ok) throw new Error(parsed.problem);
    return parsed.rule;
  });
}

/** A proxy, one run's endpoint, and what it reported and logged. */
export interface ProxyUnderTest {
  readonly proxy: EgressProxy;
  readonly endpoint: EgressEndpoint;
  readonly events: EgressConnection[];
  /** Every log line the proxy wrote, as text. */
  readonly logText: () => string;
  /** The policy the run has now; tests change it between connections. */
  policy: EgressPolicy;
  readonly caDir: string;
  readonly calls: Map<string, number>;
  close(): Promise<void>;
}

/** Starts a proxy with a resolver map and opens run `run-1` with `policy`. */
export async function startProxy(options: {
  dir: string;
  policy: EgressPolicy;
  resolver: ResolverMap;
  allowPrivate?: readonly CidrRange[];
  secrets?: readonly EgressSecret[];
  upstreamCa?: readonly string[];
  extra?: Partial<EgressProxyOptions>;
}): Promise<ProxyUnderTest> {
  const events: EgressConnection[] = [];
  const lines: string[] = [];
  const log = pino(
    { level: 'debug' },
    new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    }),
  );
  const { resolve, calls } = mapResolver(options.resolver);
  const caDir = join(options.dir, 'ca');
  const proxy = new EgressProxy({
    dir: join(options.dir, 'sock'),
    resolve,
    allowPrivate: options.allowPrivate ?? [],
    secrets: options.secrets ?? [],
    caDir,
    ...(options.upstreamCa === undefined ? {} : { upstreamCa: options.upstreamCa }),
    onConnection: (c) => events.push(c),
    log,
    ...options.extra,
  });
  const under: ProxyUnderTest = {
    proxy,
    endpoint: undefined as unknown as EgressEndpoint,
    events,
    logText: () => lines.join(''),
    policy: options.policy,
    caDir,
    calls,
    close: () => proxy.close(),
  };
  (under as { endpoint: EgressEndpoint }).endpoint = await proxy.openRun(
    'run-1',
    () => under.policy,
  );
  return under;
}

/** The loopback range, as the tests' operator allows it. */
export const LOOPBACK: readonly CidrRange[] = [cidr('127.0.0.0/8')];

/** A TCP listener on 127.0.0.1 piping each connection to a Unix socket, as the sandbox's bridge does. */
export async function startBridge(
  socketPath: string,
): Promise<{ port: number; close: () => Promise<void> }> {
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const up = createConnection(socketPath);
    for (const s of [client, up]) {
      open.add(s);
      s.on('close', () => open.delete(s));
      s.on('error', () => s.destroy());
    }
    client.pipe(up);
    up.pipe(client);
    client.on('close', () => up.destroy());
    up.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of open) s.destroy();
        server.close(() => r());
      }),
  };
}

/** A response read whole. */
export interface Answer {
  readonly status: number;
  readonly statusMessage: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** For HTTPS: the certificate the client was shown. */
  readonly peer?: PeerCertificate;
}

async function readAnswer(res: IncomingMessage, peer?: PeerCertificate): Promise<Answer> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return {
    status: res.statusCode ?? 0,
    statusMessage: res.statusMessage ?? '',
    headers: res.headers,
    body: Buffer.concat(chunks).toString(),
    ...(peer === undefined ? {} : { peer }),
  };
}

/** A plain request through the proxy socket: `GET http://...` in absolute form. */
export function plainGet(
  socketPath: string,
  url: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = httpRequest({
      socketPath,
      method: 'GET',
      path: url,
      headers: { host: u.host, ...headers },
      agent: false,
    });
    req.on('response', (res) => readAnswer(res).then(resolve, reject));
    req.on('error', reject);
    req.end();
  });
}

/** Opens a CONNECT tunnel; the answer when refused, or the socket when the tunnel opened. */
export function connectTunnel(
  socketPath: string,
  target: string,
): Promise<{ socket: Socket } | { refused: Answer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ socketPath, method: 'CONNECT', path: target, agent: false });
    req.on('connect', (res, socket, head) => {
      if (res.statusCode === 200) {
        if (head.length > 0) socket.unshift(head);
        resolve({ socket });
        return;
      }
      // A refused CONNECT's body follows its head on the socket.
      const chunks: Buffer[] = [head];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('close', () =>
        resolve({
          refused: {
            status: res.statusCode ?? 0,
            statusMessage: res.statusMessage ?? '',
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
          },
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** HTTPS through a CONNECT tunnel: Node's TLS client and HTTP client over it. */
export async function httpsGet(
  socketPath: string,
  host: string,
  port: number,
  path: string,
  options: { ca: string[]; servername?: string; headers?: Record<string, string> },
): Promise<Answer | { refused: Answer } | { tlsError: string }> {
  const tunnel = await connectTunnel(socketPath, `${host}:${port}`);
  if ('refused' in tunnel) return tunnel;
  let tls: TLSSocket;
  try {
    tls = await new Promise<TLSSocket>((resolve, reject) => {
      const s = tlsConnect({
        socket: tunnel.socket,
        servername: options.servername ?? host,
        ca: options.ca,
        // The name checked is the one asked for, as an HTTPS client checks it.
        checkServerIdentity: () => undefined,
      });
      s.once('secureConnect', () => {
        if (!s.authorized) reject(new Error(String(s.authorizationError)));
        else resolve(s);
      });
      s.once('error', reject);
    });
  } catch (err) {
    tunnel.socket.destroy();
    return { tlsError: (err as Error).message };
  }
  const peer = tls.getPeerCertificate();
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      createConnection: () => tls,
      host,
      port,
      path,
      headers: { host: port === 443 ? host : `${host}:${port}`, ...options.headers },
    });
    req.on('response', (res) =>
      readAnswer(res, peer).then((a) => {
        tls.destroy();
        resolve(a);
      }, reject),
    );
    req.on('error', reject);
    req.end();
  });
}

/** Runs curl; its exit code, standard output and standard error. */
export async function curl(
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('curl', ['-sS', '--noproxy', '', ...args], {
      encoding: 'utf8',
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof e.code === 'number' ? e.code : -1,
      stdout: e.stdout ?? '',
      stderr: e.stderr ?? '',
    };
  }
}

/** Writes `bytes` to the socket, ends its side, and reads until the proxy closes it. */
export function rawExchange(socketPath: string, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = createConnection(socketPath);
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('error', reject);
    s.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    s.end(bytes);
  });
}
