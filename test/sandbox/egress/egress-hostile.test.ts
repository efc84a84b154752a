import { type AddressInfo, createServer, type Server } from 'node:net';
import t from 'tap';
import { cidr } from '../../../src/contract/index.js';
import {
  type Answer,
  connectTunnel,
  curl,
  httpsGet,
  LOOPBACK,
  makeTestPki,
  plainGet,
  rawExchange,
  rules,
  scratch,
  startBridge,
  startHttpsUpstream,
  startHttpUpstream,
  startProxy,
} from './egress-fixture.js';

// The hostile rows of issue 29, each refused with its reason word, nothing reaching a
// server it should not, and the proxy serving on afterwards.

/** A TCP server that only counts the connections it gets: an internal service. */
async function countingServer(
  host: string,
  port = 0,
): Promise<{ server: Server; port: number; count: () => number }> {
  let n = 0;
  const server = createServer((s) => {
    n += 1;
    s.destroy();
  });
  await new Promise<void>((r, j) => {
    server.once('error', j);
    server.listen(port, host, r);
  });
  return { server, port: (server.address() as AddressInfo).port, count: () => n };
}

t.test(
  'names that resolve to addresses the policy refuses (default: no private range)',
  async (t) => {
    const tmp = await scratch('egh-');
    t.teardown(tmp.done);
    const http = await startHttpUpstream();
    t.teardown(() => http.close());
    const resolver = {
      'loop.test': ['127.0.0.1'],
      'meta.test': ['169.254.169.254'],
      'private.test': ['10.0.0.5'],
      'mixed.test': ['93.184.215.14', '10.0.0.5'],
      'v6loop.test': ['::1'],
      'mapped.test': ['::ffff:127.0.0.1'],
      'junk.test': ['not-an-address'],
      'empty.test': [],
    };
    const p = await startProxy({
      dir: tmp.dir,
      policy: { allow: rules(...Object.keys(resolver), 'nxdomain.test'), secrets: [] },
      resolver,
    });
    t.teardown(() => p.close());
    const rows: [string, number, string, RegExp][] = [
      ['loop.test', 403, 'address_blocked', /resolves to 127\.0\.0\.1 \(loopback\)/],
      ['meta.test', 403, 'address_blocked', /resolves to 169\.254\.169\.254 \(cloud-metadata\)/],
      ['private.test', 403, 'address_blocked', /resolves to 10\.0\.0\.5 \(private\)/],
      ['mixed.test', 403, 'address_blocked', /resolves to 10\.0\.0\.5 \(private\)/],
      ['v6loop.test', 403, 'address_blocked', /resolves to ::1 \(loopback\)/],
      ['mapped.test', 403, 'address_blocked', /\(loopback\)/],
      ['junk.test', 502, 'dns_failed', /not an address/],
      ['empty.test', 502, 'dns_failed', /no address/],
      ['nxdomain.test', 502, 'dns_failed', /could not be resolved \(ENOTFOUND\)/],
    ];
    for (const [host, status, reason, detail] of rows) {
      const mark = p.endpoint.mark();
      const tunnel = await connectTunnel(p.endpoint.socketPath, `${host}:${http.port}`);
      t.ok('refused' in tunnel, `CONNECT ${host}`);
      if ('refused' in tunnel) {
        t.equal(tunnel.refused.status, status, `CONNECT ${host}: ${status}`);
        t.equal(tunnel.refused.headers['x-memql-egress'], `refused; reason=${reason}`);
        t.match(tunnel.refused.body, detail);
      }
      const plain = await plainGet(p.endpoint.socketPath, `http://${host}:${http.port}/`);
      t.equal(plain.status, status, `GET http://${host}: ${status}`);
      t.match(plain.body, detail);
      t.same(p.endpoint.refusedSince(mark), [{ host, port: http.port, reason }]);
    }
    t.equal(http.connections, 0, 'the loopback server was never reached');
    t.end();
  },
);

t.test('cloud metadata stays refused whatever range the operator allows', async (t) => {
  const tmp = await scratch('egh-');
  t.teardown(tmp.done);
  const p = await startProxy({
    dir: tmp.dir,
    policy: { allow: rules('meta.test'), secrets: [] },
    resolver: { 'meta.test': ['169.254.169.254'] },
    allowPrivate: [cidr('169.254.0.0/16'), cidr('0.0.0.0/0')],
  });
  t.teardown(() => p.close());
  const r = await plainGet(p.endpoint.socketPath, 'http://meta.test/latest/meta-data/');
  t.equal(r.status, 403);
  t.equal(r.headers['x-memql-egress'], 'refused; reason=address_blocked');
});

t.test(
  'rebinding: the name is resolved once per connection, and the checked address is dialled',
  async (t) => {
    const tmp = await scratch('egh-');
    t.teardown(tmp.done);
    const pki = await makeTestPki(tmp.dir, ['rebind.test']);
    const http = await startHttpUpstream('127.0.0.1');
    const https = await startHttpsUpstream(pki, '127.0.0.1');
    t.teardown(() => http.close());
    t.teardown(() => https.close());
    // The internal services the second answer points at, on the same ports.
    const internalHttp = await countingServer('127.0.0.2', http.port);
    const internalHttps = await countingServer('127.0.0.2', https.port);
    t.teardown(() => new Promise((r) => internalHttp.server.close(r)));
    t.teardown(() => new Promise((r) => internalHttps.server.close(r)));
    const p = await startProxy({
      dir: tmp.dir,
      policy: { allow: rules('rebind.test', 'rebind2.test'), secrets: [] },
      // The first answer passes; any later one would reach the internal service.
      resolver: {
        'rebind.test': (n) => (n === 1 ? ['127.0.0.1'] : ['127.0.0.2']),
        'rebind2.test': (n) => (n === 1 ? ['127.0.0.1'] : ['127.0.0.2']),
      },
      // Only 127.0.0.1 is the operator's: 127.0.0.2 stands for an internal address.
      allowPrivate: [cidr('127.0.0.1/32')],
    });
    t.teardown(() => p.close());

    const plain = await plainGet(p.endpoint.socketPath, `http://rebind.test:${http.port}/a`);
    t.equal(plain.status, 200);
    t.equal(http.seen.at(-1)?.localAddress, '127.0.0.1');
    t.equal(p.calls.get('rebind.test'), 1, 'one resolution for the request');
    const tls = (await httpsGet(p.endpoint.socketPath, 'rebind2.test', https.port, '/a', {
      ca: [pki.caPem],
      servername: 'rebind2.test',
    })) as Answer;
    t.equal(tls.status, 200);
    t.equal(p.calls.get('rebind2.test'), 1, 'one resolution for the tunnel');
    t.equal(
      internalHttp.count() + internalHttps.count(),
      0,
      'the internal services were never reached',
    );
    // The next connection resolves again, and the new answer is checked like the first.
    const again = await plainGet(p.endpoint.socketPath, `http://rebind.test:${http.port}/b`);
    t.equal(again.status, 403);
    t.match(again.body, /resolves to 127\.0\.0\.2 \(loopback\)/);
    t.equal(internalHttp.count(), 0);
  },
);

t.test('raw IP targets, names that are not names, and targets that are not targets', async (t) => {
  const tmp = await scratch('egh-');
  t.teardown(tmp.done);
  const http = await startHttpUpstream();
  t.teardown(() => http.close());
  const p = await startProxy({
    dir: tmp.dir,
    policy: { allow: rules('pkgs.test'), secrets: [] },
    resolver: { 'pkgs.test': ['127.0.0.1'] },
    allowPrivate: LOOPBACK,
  });
  t.teardown(() => p.close());
  const connects: [string, string][] = [
    [`127.0.0.1:${http.port}`, 'ip_literal'],
    ['[::1]:443', 'ip_literal'],
    ['[::ffff:127.0.0.1]:443', 'ip_literal'],
    ['2130706433:443', 'ip_literal'],
    ['0x7f.1:443', 'ip_literal'],
    ['127.1:443', 'ip_literal'],
    ['pkgs_test.example:443', 'not_a_name'],
    ['pkgs.test', 'bad_request'],
    ['pkgs.test:0', 'bad_request'],
    ['pkgs.test:99999', 'bad_request'],
    ['user@pkgs.test:443', 'bad_request'],
  ];
  for (const [target, reason] of connects) {
    const r = await rawExchange(
      p.endpoint.socketPath,
      `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`,
    );
    t.match(r, /^HTTP\/1\.1 (403|400) [^\r]*\r\n/, `CONNECT ${target}`);
    t.match(r, `x-memql-egress: refused; reason=${reason}`, `CONNECT ${target}: ${reason}`);
  }
  const plain: [string, string][] = [
    [`http://127.0.0.1:${http.port}/`, 'ip_literal'],
    [`http://[::1]:${http.port}/`, 'ip_literal'],
    ['http://2130706433/', 'ip_literal'],
    ['https://pkgs.test/', 'bad_request'],
    ['ftp://pkgs.test/', 'bad_request'],
    ['http://user:pw@pkgs.test/', 'bad_request'],
    ['/just/a/path', 'bad_request'],
  ];
  for (const [target, reason] of plain) {
    const r = await rawExchange(
      p.endpoint.socketPath,
      `GET ${target} HTTP/1.1\r\nHost: pkgs.test\r\nConnection: close\r\n\r\n`,
    );
    t.match(r, `x-memql-egress: refused; reason=${reason}`, `GET ${target}: ${reason}`);
  }
  t.equal(http.connections, 0, 'no address was dialled');
  t.ok(p.events.every((e) => !e.allowed));
  t.equal(p.calls.size, 0, 'nothing was resolved');
});

t.test('an allowed name on a port its rule does not allow', async (t) => {
  const tmp = await scratch('egh-');
  t.teardown(tmp.done);
  const http = await startHttpUpstream();
  t.teardown(() => http.close());
  const p = await startProxy({
    dir: tmp.dir,
    policy: { allow: rules(`pkgs.test:${http.port}`), secrets: [] },
    resolver: { 'pkgs.test': ['127.0.0.1'] },
    allowPrivate: LOOPBACK,
  });
  t.teardown(() => p.close());
  const other = http.port === 65_535 ? http.port - 1 : http.port + 1;
  const tunnel = await connectTunnel(p.endpoint.socketPath, `pkgs.test:${other}`);
  t.ok('refused' in tunnel);
  if ('refused' in tunnel) {
    t.equal(tunnel.refused.headers['x-memql-egress'], 'refused; reason=port_not_allowed');
    t.match(tunnel.refused.body, `allows pkgs.test on port ${http.port} only, not ${other}`);
  }
  const plain = await plainGet(p.endpoint.socketPath, `http://pkgs.test:${other}/`);
  t.equal(plain.headers['x-memql-egress'], 'refused; reason=port_not_allowed');
  t.equal((await plainGet(p.endpoint.socketPath, `http://pkgs.test:${http.port}/`)).status, 200);
  t.equal(p.calls.get('pkgs.test'), 1, 'only the allowed request was resolved');
});

t.test('SNI that disagrees with the CONNECT host, and a tunnel that is not TLS', async (t) => {
  const tmp = await scratch('egh-');
  t.teardown(tmp.done);
  const pki = await makeTestPki(tmp.dir, ['pkgs.test', 'evil.test']);
  const https = await startHttpsUpstream(pki);
  t.teardown(() => https.close());
  const p = await startProxy({
    dir: tmp.dir,
    policy: { allow: rules('pkgs.test'), secrets: [] },
    resolver: { 'pkgs.test': ['127.0.0.1'], 'evil.test': ['127.0.0.1'] },
    allowPrivate: LOOPBACK,
  });
  t.teardown(() => p.close());
  const mark = p.endpoint.mark();
  const r = await httpsGet(p.endpoint.socketPath, 'pkgs.test', https.port, '/', {
    ca: [pki.caPem],
    servername: 'evil.test',
  });
  t.ok('tlsError' in r, 'the handshake fails');
  if ('tlsError' in r) t.match(r.tlsError, /alert access denied/);
  // Upper case and a trailing dot are the same name, not a disagreement.
  const same = (await httpsGet(p.endpoint.socketPath, 'pkgs.test', https.port, '/', {
    ca: [pki.caPem],
    servername: 'PKGS.test',
  })) as Answer;
  t.equal(same.status, 200);

  // Clear text in a tunnel: a Host header the proxy could not check.
  const tunnel = await connectTunnel(p.endpoint.socketPath, `pkgs.test:${https.port}`);
  t.ok('socket' in tunnel);
  if ('socket' in tunnel) {
    const closed = new Promise<string>((resolve) => {
      const got: Buffer[] = [];
      tunnel.socket.on('data', (c: Buffer) => got.push(c));
      tunnel.socket.on('close', () => resolve(Buffer.concat(got).toString()));
    });
    tunnel.socket.write('GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n');
    t.equal(await closed, '', 'closed with no answer from the destination');
  }
  t.same(p.endpoint.refusedSince(mark), [
    { host: 'pkgs.test', port: https.port, reason: 'sni_mismatch' },
    { host: 'pkgs.test', port: https.port, reason: 'not_tls' },
  ]);
  t.equal(https.seen.length, 1, 'only the agreeing request reached the server');
});

t.test('a Host header that disagrees with the URL, and a redirect to a refused host', async (t) => {
  const tmp = await scratch('egh-');
  t.teardown(tmp.done);
  const http = await startHttpUpstream();
  t.teardown(() => http.close());
  const p = await startProxy({
    dir: tmp.dir,
    policy: { allow: rules('plain.test'), secrets: [] },
    resolver: { 'plain.test': ['127.0.0.1'], 'refused.test': ['127.0.0.1'] },
    allowPrivate: LOOPBACK,
  });
  t.teardown(() => p.close());
  const bridge = await startBridge(p.endpoint.socketPath);
  t.teardown(() => bridge.close());
  const proxy = `http://127.0.0.1:${bridge.port}`;
  const mark = p.endpoint.mark();
  const r = await curl([
    '-i',
    '--proxy',
    proxy,
    '-H',
    'Host: evil.test',
    `http://plain.test:${http.port}/`,
  ]);
  t.match(r.stdout, /^HTTP\/1\.1 403 /);
  t.match(r.stdout, /reason=host_mismatch/);
  // Same host, another spelling: agrees.
  const ok = await plainGet(p.endpoint.socketPath, `http://plain.test:${http.port}/`, {
    host: `PLAIN.test.:${http.port}`,
  });
  t.equal(ok.status, 200);
  t.equal(
    http.seen.at(-1)?.headers.host,
    `plain.test:${http.port}`,
    'the upstream Host is the checked name',
  );
  // Each hop of a redirect is a new request through the proxy, checked again.
  const followed = await curl([
    '-i',
    '-L',
    '--proxy',
    proxy,
    `http://plain.test:${http.port}/redirect`,
  ]);
  t.match(followed.stdout, /HTTP\/1\.1 302/);
  t.match(followed.stdout, /HTTP\/1\.1 403 [^\n]*refused\.test:80 \(not_allowed\)/);
  t.same(p.endpoint.refusedSince(mark), [
    { host: 'plain.test', port: http.port, reason: 'host_mismatch' },
    { host: 'refused.test', port: 80, reason: 'not_allowed' },
  ]);
  t.equal(http.seen.length, 2, 'the mismatched request never reached the server');
});
