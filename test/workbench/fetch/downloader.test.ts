import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createSecureContext } from 'node:tls';
import t, { type Test } from 'tap';
import { cidr, WorkbenchError } from '../../../src/contract/index.js';
import {
  type FetchDestination,
  type FetchToFileOptions,
  fetchToFile,
} from '../../../src/workbench/fetch/downloader.js';
import { FetchError, type FetchErrorCode } from '../../../src/workbench/fetch/error.js';
import type { HostResolver } from '../../../src/workbench/fetch/index.js';
import { eventually } from '../../support/mesh.js';

// Traffic rule of these tests: only loopback. A guard on net.Socket#connect records
// every connection attempt in this process and refuses any that is not loopback, so
// even a policy bug cannot send a packet elsewhere; tests assert the refusals
// happened before any attempt at all.

const isLoopback = (host: string) =>
  /^127\./.test(host) || host === '::1' || host === 'localhost' || /^::ffff:127\./.test(host);

const attempts: string[] = [];
/** Every attempt of the whole file; {@link attempts} is reset per test. */
const everAttempted: string[] = [];
type Connect = (this: net.Socket, ...args: unknown[]) => net.Socket;
const socketProto = net.Socket.prototype as unknown as { connect: Connect };
const originalConnect = socketProto.connect;
socketProto.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
  const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
  const options =
    typeof first === 'object' && first !== null ? (first as Record<string, unknown>) : {};
  if (typeof options.path === 'string') return originalConnect.apply(this, args);
  const host =
    typeof options.host === 'string'
      ? options.host
      : typeof args[1] === 'string'
        ? args[1]
        : 'localhost';
  attempts.push(host);
  everAttempted.push(host);
  if (!isLoopback(host)) {
    process.nextTick(() => this.destroy(new Error(`test guard: refused connect to ${host}`)));
    return this;
  }
  return originalConnect.apply(this, args);
};
t.teardown(() => {
  socketProto.connect = originalConnect;
});

const BODY = randomBytes(200_000);

/** What the server saw: connections (peer addresses) and requests (path, Host). */
const seen = { connections: [] as string[], requests: [] as { path: string; host: string }[] };

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  seen.requests.push({ path: url.pathname + url.search, host: req.headers.host ?? '' });
  const hop = /^\/hop\/([0-9]+)$/.exec(url.pathname);
  if (url.pathname === '/file') {
    res.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': BODY.length,
    });
    res.end(BODY);
  } else if (url.pathname === '/redirect') {
    res.writeHead(Number(url.searchParams.get('status') ?? 302), {
      location: url.searchParams.get('to') ?? '/',
    });
    res.end();
  } else if (url.pathname === '/loop') {
    res.writeHead(301, { location: '/loop' });
    res.end();
  } else if (hop !== null) {
    const n = Number(hop[1]);
    res.writeHead(307, { location: n === 0 ? '/file' : `/hop/${n - 1}` });
    res.end();
  } else if (url.pathname === '/announced-too-large') {
    res.writeHead(200, { 'content-length': 50_000_000 });
    res.write(BODY.subarray(0, 1000));
  } else if (url.pathname === '/chunked-too-large') {
    res.writeHead(200, { 'content-type': 'text/plain' }); // no length: chunked
    let sent = 0;
    const more = (): void => {
      if (sent >= 400_000 || res.destroyed) {
        res.end();
        return;
      }
      sent += 16_384;
      res.write(BODY.subarray(0, 16_384), more);
    };
    more();
  } else if (url.pathname === '/slow-headers') {
    // Never answers.
  } else if (url.pathname === '/slow-body') {
    res.writeHead(200, { 'content-length': BODY.length });
    res.write(BODY.subarray(0, 1000)); // then stalls
  } else if (url.pathname === '/truncated') {
    res.writeHead(200, { 'content-length': BODY.length });
    res.write(BODY.subarray(0, 1000), () => res.socket?.destroy());
  } else if (url.pathname === '/host') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(req.headers.host ?? '');
  } else {
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('SECRET-BODY-TEXT that must never reach an error');
  }
});
server.on('connection', (socket) => seen.connections.push(socket.remoteAddress ?? '?'));

let port = 0;
let base = '';
let dir = '';

t.before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  dir = await mkdtemp(join(tmpdir(), 'memql-fetch-test-'));
});

t.teardown(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

t.beforeEach(() => {
  seen.connections.length = 0;
  seen.requests.length = 0;
  attempts.length = 0;
});

let fileCounter = 0;

/** A destination writing a temp file, recording whether it was opened and aborted. */
function fileDestination() {
  const path = join(dir, `out-${++fileCounter}.bin`);
  const calls = { opened: 0, aborted: 0 };
  const destination: FetchDestination = {
    async open() {
      calls.opened += 1;
      return createWriteStream(path);
    },
    async abort() {
      calls.aborted += 1;
      await rm(path, { force: true });
    },
  };
  return { path, calls, destination };
}

/** A resolver answering from a table, recording every question. */
function tableResolver(table: Record<string, string[]>) {
  const calls: string[] = [];
  const resolver: HostResolver = async (host) => {
    calls.push(host);
    const addresses = table[host];
    if (addresses === undefined) {
      throw Object.assign(new Error(`no such host ${host}`), { code: 'ENOTFOUND' });
    }
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { calls, resolver };
}

const LOOPBACK = [cidr('127.0.0.0/8')];

function options(
  url: string,
  destination: FetchDestination,
  extra: Partial<FetchToFileOptions> = {},
): FetchToFileOptions {
  return {
    url,
    destination,
    maxBytes: 1_000_000,
    timeoutMs: 5_000,
    resolver: tableResolver({}).resolver,
    ...extra,
  };
}

/** Runs a fetch that must fail with `code`; returns the error. */
async function refused(
  t: Test,
  promise: Promise<unknown>,
  code: FetchErrorCode,
  label?: string,
): Promise<FetchError> {
  try {
    await promise;
  } catch (err) {
    const what = label ?? code;
    t.type(err, FetchError, what);
    const error = err as FetchError;
    t.equal(error.code, code, what);
    t.ok(error.message.startsWith(`${code}: `), `${what}: message starts with the code`);
    return error;
  }
  t.fail(`${label ?? 'fetch'} should have failed with ${code}`);
  throw new Error('unreachable');
}

t.test('downloads a file byte for byte from an allowed loopback server', async (t) => {
  const { path, calls, destination } = fileDestination();
  const { resolver, calls: lookups } = tableResolver({});
  const result = await fetchToFile(
    options(`${base}/file`, destination, { allowPrivate: LOOPBACK, resolver }),
  );
  t.strictSame(result, {
    status: 200,
    bytes: BODY.length,
    contentType: 'application/octet-stream',
    finalUrl: `${base}/file`,
    address: '127.0.0.1',
    redirects: 0,
  });
  t.ok((await readFile(path)).equals(BODY), 'file content equals the served bytes');
  t.strictSame(calls, { opened: 1, aborted: 0 });
  t.strictSame(lookups, [], 'an address literal is not resolved');
  t.equal(seen.requests[0]?.host, `127.0.0.1:${port}`, 'Host header names the URL host');
});

t.test('without the allow list the same loopback URL is blocked before connecting', async (t) => {
  const { calls, destination } = fileDestination();
  const err = await refused(t, fetchToFile(options(`${base}/file`, destination)), 'fetch_blocked');
  t.match(err.payload, { address: '127.0.0.1', category: 'loopback' });
  t.match(err.message, /127\.0\.0\.1 is a loopback address/);
  t.match(err.message, /MEMQL_FETCH_ALLOW_PRIVATE/);
  t.strictSame(seen.connections, [], 'the server saw no connection');
  t.strictSame(attempts, [], 'no socket was opened');
  t.strictSame(calls, { opened: 0, aborted: 0 }, 'no file was created');
});

t.test('every notation of loopback is blocked without DNS or a connection', async (t) => {
  const urls = [
    `http://2130706433:${port}/file`,
    `http://0x7f.1:${port}/file`,
    `http://0x7f.0.0.1:${port}/file`,
    `http://0x7f000001:${port}/file`,
    `http://0177.0.0.1:${port}/file`,
    `http://127.1:${port}/file`,
    `http://127.0.1:${port}/file`,
    `http://127.0.0.1.:${port}/file`,
    `http://[::ffff:127.0.0.1]:${port}/file`,
    `http://[::ffff:7f00:1]:${port}/file`,
    `http://[::ffff:0:7f00:1]:${port}/file`,
    `http://[::127.0.0.1]:${port}/file`,
    `http://[::1]:${port}/file`,
    `https://2130706433:${port}/file`,
  ];
  for (const url of urls) {
    const { resolver, calls: lookups } = tableResolver({});
    const { calls, destination } = fileDestination();
    const err = await refused(
      t,
      fetchToFile(options(url, destination, { resolver })),
      'fetch_blocked',
      url,
    );
    t.equal(err.payload.category, 'loopback', `${url}: category`);
    t.strictSame(lookups, [], `${url}: not resolved`);
    t.equal(calls.opened, 0, `${url}: nothing opened`);
  }
  t.strictSame(seen.connections, [], 'the server saw no connection');
  t.strictSame(attempts, [], 'no socket was opened');
});

t.test('0.0.0.0 is refused even when loopback is allowed', async (t) => {
  for (const host of ['0.0.0.0', '0', '[::]']) {
    const { destination } = fileDestination();
    const url = `http://${host}:${port}/file`;
    const err = await refused(
      t,
      fetchToFile(options(url, destination, { allowPrivate: LOOPBACK })),
      'fetch_blocked',
      url,
    );
    t.equal(err.payload.category, 'unspecified', url);
  }
  t.strictSame(attempts, []);
});

t.test('a name resolving to a blocked address is refused without connecting', async (t) => {
  const { resolver, calls: lookups } = tableResolver({
    'metadata.test': ['169.254.169.254'],
    'intranet.test': ['10.0.0.1'],
    'mixed.test': ['93.184.215.14', '10.0.0.1'],
    'mixed-allowed.test': ['127.0.0.1', '192.168.1.1'],
    'mapped.test': ['::ffff:169.254.169.254'],
    'localhost.test': ['127.0.0.1'],
  });
  const cases: [string, string, string][] = [
    ['metadata.test', '169.254.169.254', 'cloud-metadata'],
    ['intranet.test', '10.0.0.1', 'private'],
    ['mixed.test', '10.0.0.1', 'private'],
    ['mixed-allowed.test', '192.168.1.1', 'private'],
    ['mapped.test', '::ffff:169.254.169.254', 'cloud-metadata'],
    ['localhost.test', '127.0.0.1', 'loopback'],
  ];
  for (const [host, address, category] of cases) {
    const { destination } = fileDestination();
    const allowPrivate = host === 'mixed-allowed.test' ? LOOPBACK : [];
    const err = await refused(
      t,
      fetchToFile(options(`http://${host}/file`, destination, { resolver, allowPrivate })),
      'fetch_blocked',
      host,
    );
    t.match(err.payload, { host, address, category }, host);
    t.match(err.message, new RegExp(`${host} resolves to`), host);
  }
  t.strictSame(
    lookups,
    cases.map(([host]) => host),
    'one lookup per fetch',
  );
  t.strictSame(attempts, [], 'no socket was opened, not even to the public address');
});

t.test('a cloud metadata address stays blocked whatever the allow list says', async (t) => {
  const { destination } = fileDestination();
  const err = await refused(
    t,
    fetchToFile(
      options('http://169.254.169.254/latest/meta-data/', destination, {
        allowPrivate: [cidr('0.0.0.0/0'), cidr('::/0')],
      }),
    ),
    'fetch_blocked',
  );
  t.equal(err.payload.category, 'cloud-metadata');
  t.match(err.message, /never reaches cloud metadata/);
  t.strictSame(attempts, []);
});

t.test('redirects to blocked places are refused before the next connection', async (t) => {
  const targets: [string, string][] = [
    ['http://169.254.169.254/latest/meta-data/', 'cloud-metadata'],
    ['http://10.0.0.1/', 'private'],
    ['http://[::ffff:a9fe:a9fe]/', 'cloud-metadata'],
    ['http://0xa9fea9fe/', 'cloud-metadata'],
    ['file:///etc/passwd', 'scheme'],
    ['ftp://127.0.0.1/', 'scheme'],
    ['gopher://127.0.0.1:70/', 'scheme'],
  ];
  for (const [to, category] of targets) {
    seen.connections.length = 0;
    attempts.length = 0;
    const { calls, destination } = fileDestination();
    const url = `${base}/redirect?to=${encodeURIComponent(to)}`;
    const err = await refused(
      t,
      fetchToFile(options(url, destination, { allowPrivate: LOOPBACK })),
      'fetch_blocked',
      to,
    );
    t.match(err.payload, { category, redirects: 1 }, to);
    t.equal(seen.connections.length, 1, `${to}: only the first hop connected`);
    t.strictSame(attempts, ['127.0.0.1'], `${to}: no socket beyond the first hop`);
    t.equal(calls.opened, 0, `${to}: nothing opened`);
  }
});

t.test('a redirect to a name is re-resolved and re-checked against the allow list', async (t) => {
  const { resolver, calls: lookups } = tableResolver({ 'internal.test': ['127.0.0.2'] });
  const { destination } = fileDestination();
  const to = `http://internal.test:${port}/file`;
  const err = await refused(
    t,
    fetchToFile(
      options(`${base}/redirect?to=${encodeURIComponent(to)}`, destination, {
        resolver,
        allowPrivate: [cidr('127.0.0.1/32')],
      }),
    ),
    'fetch_blocked',
  );
  t.match(err.payload, { host: 'internal.test', address: '127.0.0.2', category: 'loopback' });
  t.strictSame(lookups, ['internal.test']);
  t.equal(seen.connections.length, 1, 'only the first hop connected');
  t.strictSame(attempts, ['127.0.0.1']);
});

t.test('an allowed name connects to the vetted address with its own Host header', async (t) => {
  const { resolver, calls: lookups } = tableResolver({ 'files.test': ['127.0.0.1'] });
  const { path, destination } = fileDestination();
  const to = `http://files.test:${port}/host`;
  const result = await fetchToFile(
    options(`${base}/redirect?status=308&to=${encodeURIComponent(to)}`, destination, {
      resolver,
      allowPrivate: [cidr('127.0.0.1/32')],
    }),
  );
  t.match(result, { status: 200, finalUrl: to, address: '127.0.0.1', redirects: 1 });
  t.equal(await readFile(path, 'utf8'), `files.test:${port}`, 'the server saw Host: files.test');
  t.strictSame(lookups, ['files.test'], 'resolved once, never again at connect time');
  t.strictSame(attempts, ['127.0.0.1', '127.0.0.1']);
});

t.test('redirect loops and long chains fail', async (t) => {
  const loop = await refused(
    t,
    fetchToFile(options(`${base}/loop`, fileDestination().destination, { allowPrivate: LOOPBACK })),
    'fetch_failed',
  );
  t.equal(loop.payload.category, 'redirect_loop');

  seen.requests.length = 0;
  const chain = await refused(
    t,
    fetchToFile(
      options(`${base}/hop/6`, fileDestination().destination, { allowPrivate: LOOPBACK }),
    ),
    'fetch_failed',
  );
  t.match(chain.payload, { category: 'too_many_redirects', redirects: 5 });
  t.equal(seen.requests.length, 6, 'five redirects followed, the sixth refused');

  const ok = await fetchToFile(
    options(`${base}/hop/4`, fileDestination().destination, { allowPrivate: LOOPBACK }),
  );
  t.match(ok, { status: 200, bytes: BODY.length, redirects: 5, finalUrl: `${base}/file` });

  const none = await refused(
    t,
    fetchToFile(
      options(`${base}/hop/0`, fileDestination().destination, {
        allowPrivate: LOOPBACK,
        maxRedirects: 0,
      }),
    ),
    'fetch_failed',
  );
  t.equal(none.payload.category, 'too_many_redirects');
});

t.test('an announced Content-Length over the limit is refused before reading', async (t) => {
  const { calls, destination } = fileDestination();
  const err = await refused(
    t,
    fetchToFile(
      options(`${base}/announced-too-large`, destination, {
        allowPrivate: LOOPBACK,
        maxBytes: 100_000,
      }),
    ),
    'payload_too_large',
  );
  t.match(err.payload, {
    category: 'content_length',
    contentLength: 50_000_000,
    maxBytes: 100_000,
  });
  t.strictSame(calls, { opened: 0, aborted: 0 }, 'no file was opened');
});

t.test('a streamed body over the limit is cut off and the partial file discarded', async (t) => {
  const { path, calls, destination } = fileDestination();
  const err = await refused(
    t,
    fetchToFile(
      options(`${base}/chunked-too-large`, destination, {
        allowPrivate: LOOPBACK,
        maxBytes: 100_000,
      }),
    ),
    'payload_too_large',
  );
  t.match(err.payload, { category: 'body', maxBytes: 100_000 });
  t.strictSame(calls, { opened: 1, aborted: 1 });
  t.notOk(existsSync(path), 'the partial file is gone');

  const exact = fileDestination();
  const result = await fetchToFile(
    options(`${base}/file`, exact.destination, { allowPrivate: LOOPBACK, maxBytes: BODY.length }),
  );
  t.equal(result.bytes, BODY.length, 'a body of exactly maxBytes is accepted');
});

t.test('the time limit covers the whole transfer', async (t) => {
  const headers = fileDestination();
  const slow = await refused(
    t,
    fetchToFile(
      options(`${base}/slow-headers`, headers.destination, {
        allowPrivate: LOOPBACK,
        timeoutMs: 300,
      }),
    ),
    'fetch_failed',
  );
  t.equal(slow.payload.category, 'timeout');
  t.match(slow.message, /longer than 300 ms/);
  t.strictSame(headers.calls, { opened: 0, aborted: 0 });

  const body = fileDestination();
  const stalled = await refused(
    t,
    fetchToFile(
      options(`${base}/slow-body`, body.destination, { allowPrivate: LOOPBACK, timeoutMs: 300 }),
    ),
    'fetch_failed',
  );
  t.equal(stalled.payload.category, 'timeout');
  t.strictSame(body.calls, { opened: 1, aborted: 1 }, 'the partial file was discarded');
  t.notOk(existsSync(body.path));

  const resolver: HostResolver = () => new Promise(() => {});
  const dns = await refused(
    t,
    fetchToFile(
      options('http://hangs.test/', fileDestination().destination, { resolver, timeoutMs: 200 }),
    ),
    'fetch_failed',
  );
  t.equal(dns.payload.category, 'timeout', 'a resolver that never answers times out too');
});

t.test('a non-2xx answer fails with its status and never leaks the body', async (t) => {
  const { calls, destination } = fileDestination();
  const err = await refused(
    t,
    fetchToFile(options(`${base}/missing`, destination, { allowPrivate: LOOPBACK })),
    'fetch_failed',
  );
  t.match(err.payload, { category: 'status', status: 404 });
  t.match(err.message, /HTTP 404/);
  t.notMatch(JSON.stringify({ message: err.message, payload: err.payload }), /SECRET-BODY-TEXT/);
  t.strictSame(calls, { opened: 0, aborted: 0 });
});

t.test('only http and https; no credentials in the URL', async (t) => {
  for (const url of [
    'file:///etc/passwd',
    `ftp://127.0.0.1:${port}/`,
    'gopher://127.0.0.1:70/_x',
    'data:text/plain,hello',
    'javascript:alert(1)',
    'ws://127.0.0.1/',
  ]) {
    const err = await refused(
      t,
      fetchToFile(options(url, fileDestination().destination, { allowPrivate: LOOPBACK })),
      'fetch_blocked',
      url,
    );
    t.equal(err.payload.category, 'scheme', url);
  }
  const creds = await refused(
    t,
    fetchToFile(
      options(`http://user:hunter2@127.0.0.1:${port}/file`, fileDestination().destination, {
        allowPrivate: LOOPBACK,
      }),
    ),
    'fetch_blocked',
  );
  t.equal(creds.payload.category, 'userinfo');
  t.notMatch(
    JSON.stringify(creds.payload) + creds.message,
    /hunter2/,
    'the password is not echoed',
  );
  t.strictSame(attempts, []);
});

t.test('DNS and connection failures are fetch_failed', async (t) => {
  const dns = await refused(
    t,
    fetchToFile(options('http://nowhere.test/', fileDestination().destination)),
    'fetch_failed',
  );
  t.match(dns.payload, { category: 'dns', errno: 'ENOTFOUND' });

  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const closedPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const refusedConn = await refused(
    t,
    fetchToFile(
      options(`http://127.0.0.1:${closedPort}/`, fileDestination().destination, {
        allowPrivate: LOOPBACK,
      }),
    ),
    'fetch_failed',
  );
  t.match(refusedConn.payload, { category: 'connection', errno: 'ECONNREFUSED' });
});

t.test('the caller can cancel', async (t) => {
  const controller = new AbortController();
  const { calls, destination } = fileDestination();
  const pending = fetchToFile(
    options(`${base}/slow-body`, destination, {
      allowPrivate: LOOPBACK,
      signal: controller.signal,
    }),
  );
  const outcome = refused(t, pending, 'fetch_failed');
  // Cancel mid-body: the destination is open and the server has stalled after 1000 bytes.
  await eventually('the destination is opened', () => calls.opened === 1);
  controller.abort();
  const err = await outcome;
  t.equal(err.payload.category, 'cancelled');
  t.strictSame(calls, { opened: 1, aborted: 1 });
});

t.test(
  'a body cut off before its announced length is fetch_failed, partial file discarded',
  async (t) => {
    const { path, calls, destination } = fileDestination();
    const err = await refused(
      t,
      fetchToFile(options(`${base}/truncated`, destination, { allowPrivate: LOOPBACK })),
      'fetch_failed',
    );
    t.equal(err.payload.category, 'connection');
    t.strictSame(calls, { opened: 1, aborted: 1 });
    t.notOk(existsSync(path));
  },
);

t.test("the destination's own errors pass through unchanged", async (t) => {
  const failure = new WorkbenchError(
    'invalid_path',
    'invalid_path: the target escapes the workspace',
  );
  const destination: FetchDestination = {
    open: async () => {
      throw failure;
    },
    abort: async () => {},
  };
  await t.rejects(
    fetchToFile(options(`${base}/file`, destination, { allowPrivate: LOOPBACK })),
    failure,
  );

  const diskFull = Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
  let aborted = 0;
  const failing: FetchDestination = {
    open: async () =>
      new Writable({
        write(_chunk, _encoding, callback) {
          callback(diskFull);
        },
      }),
    abort: async () => {
      aborted += 1;
    },
  };
  await t.rejects(
    fetchToFile(options(`${base}/file`, failing, { allowPrivate: LOOPBACK })),
    diskFull,
    "a write failure is the destination's, not a fetch_failed",
  );
  t.equal(aborted, 1, 'and the partial output is discarded');
});

t.test('bad options are invalid_arguments', async (t) => {
  const { destination } = fileDestination();
  const bad: Partial<FetchToFileOptions>[] = [
    { url: 'not a url' },
    { url: '/relative/path' },
    { maxBytes: 0 },
    { maxBytes: 1.5 },
    { timeoutMs: 0 },
    { timeoutMs: 2 ** 31 },
    { maxRedirects: -1 },
    { maxRedirects: 100 },
    { destination: {} as FetchDestination },
  ];
  for (const extra of bad) {
    await refused(
      t,
      fetchToFile({ ...options(`${base}/file`, destination), ...extra }),
      'invalid_arguments',
      JSON.stringify(extra),
    );
  }
  t.strictSame(seen.connections, []);
});

// A throwaway self-signed certificate for files.test (EC P-256, valid to 2126),
// used only to see what the client sends; it is not trusted, so handshakes fail.
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgLXkUSmNa3l1XCygv
d0GEjBze4/CVqhtgOL6z73IWKSehRANCAARfaevMi3TcVciw2h5tGzNsqUAv8jBQ
e7Zt09wtKAWdWjioclz4Ssu7yqHmlzKAWX8mdKl4Xw8FB+cyi3FFPXAb
-----END PRIVATE KEY-----
`;
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBlzCCAT6gAwIBAgIUJz+h4LRZUFBf21G7pQLmh5p21OMwCgYIKoZIzj0EAwIw
FTETMBEGA1UEAwwKZmlsZXMudGVzdDAgFw0yNjExMjkyMjEyMTRaGA8yMTI2MTEw
NTIyMTIxNFowFTETMBEGA1UEAwwKZmlsZXMudGVzdDBZMBMGByqGSM49AgEGCCqG
SM49AwEHA0IABF9p68yLdNxVyLDaHm0bM2ypQC/yMFB7tm3T3C0oBZ1aOKhyXPhK
y7vKoeaXMoBZfyZ0qXhfDwUH5zKLcUU9cBujajBoMB0GA1UdDgQWBBQQtfxaPMtS
kqcOkPUe5gNPP+gPUjAfBgNVHSMEGDAWgBQQtfxaPMtSkqcOkPUe5gNPP+gPUjAP
BgNVHRMBAf8EBTADAQH/MBUGA1UdEQQOMAyCCmZpbGVzLnRlc3QwCgYIKoZIzj0E
AwIDRwAwRAIgHHQkbnYPt1CdGjizS0g1SW8XZHYySZj5FoTPKeu9O4UCIEjmOfxZ
vPqu9T7YxYi4VMrYOvM8xjdoRiyKlUzD1o8V
-----END CERTIFICATE-----
`;

t.test('https connects to the vetted address and sends the name as SNI', async (t) => {
  const serverNames: string[] = [];
  const context = createSecureContext({ key: TEST_KEY, cert: TEST_CERT });
  const tlsServer = https.createServer({
    key: TEST_KEY,
    cert: TEST_CERT,
    SNICallback: (name, callback) => {
      serverNames.push(name);
      callback(null, context);
    },
  });
  tlsServer.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    tlsServer.closeAllConnections();
    return new Promise<void>((resolve) => tlsServer.close(() => resolve()));
  });
  const tlsPort = (tlsServer.address() as AddressInfo).port;
  const { resolver, calls: lookups } = tableResolver({ 'files.test': ['127.0.0.1'] });

  const byName = await refused(
    t,
    fetchToFile(
      options(`https://files.test:${tlsPort}/file`, fileDestination().destination, {
        resolver,
        allowPrivate: LOOPBACK,
      }),
    ),
    'fetch_failed',
  );
  t.match(byName.payload, { category: 'tls', errno: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
  t.strictSame(serverNames, ['files.test'], 'SNI carried the URL host');
  t.strictSame(lookups, ['files.test']);
  t.strictSame(attempts, ['127.0.0.1'], 'the socket went to the vetted address');

  const byAddress = await refused(
    t,
    fetchToFile(
      options(`https://127.0.0.1:${tlsPort}/file`, fileDestination().destination, {
        allowPrivate: LOOPBACK,
      }),
    ),
    'fetch_failed',
  );
  t.equal(byAddress.payload.category, 'tls');
  t.strictSame(serverNames, ['files.test'], 'no SNI for an address literal');
});

t.test('no connection attempt in this file left loopback', async (t) => {
  t.ok(everAttempted.length > 0, 'the guard saw the loopback connections');
  t.strictSame(
    everAttempted.filter((host) => !isLoopback(host)),
    [],
  );
});
