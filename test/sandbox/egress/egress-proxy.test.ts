import { stat } from 'node:fs/promises';
import t from 'tap';
import { NO_EGRESS } from '../../../src/contract/index.js';
import { eventually } from '../../support/mesh.js';
import {
  type Answer,
  connectTunnel,
  curl,
  httpsGet,
  LOOPBACK,
  makeTestPki,
  plainGet,
  rules,
  scratch,
  startBridge,
  startHttpsUpstream,
  startHttpUpstream,
  startProxy,
} from './egress-fixture.js';

// The proxy driven through a run's Unix socket by real clients: curl over a TCP bridge
// (as inside the sandbox) and Node's HTTP and TLS clients. Loopback servers stand in
// for the internet; the resolver map sends the test names to 127.0.0.1, and the
// operator's allowed range is 127.0.0.0/8 so those servers are reachable.

t.test('allowed, refused, and a policy change for the next connection', async (t) => {
  const tmp = await scratch('egp-');
  t.teardown(tmp.done);
  const pki = await makeTestPki(tmp.dir, ['pkgs.test', 'other.test']);
  const https = await startHttpsUpstream(pki);
  const http = await startHttpUpstream();
  t.teardown(() => https.close());
  t.teardown(() => http.close());
  const p = await startProxy({
    dir: tmp.dir,
    policy: { allow: rules(`pkgs.test:${https.port}`, `plain.test:${http.port}`), secrets: [] },
    resolver: {
      'pkgs.test': ['127.0.0.1'],
      'plain.test': ['127.0.0.1'],
      'other.test': ['127.0.0.1'],
    },
    allowPrivate: LOOPBACK,
  });
  t.teardown(() => p.close());
  const bridge = await startBridge(p.endpoint.socketPath);
  t.teardown(() => bridge.close());
  const proxyUrl = `http://127.0.0.1:${bridge.port}`;

  t.test(
    'the endpoint: a socket others can connect to, in a private directory, and the CA',
    async (t) => {
      t.equal((await stat(p.endpoint.socketPath)).mode & 0o777, 0o666);
      t.equal((await stat(`${tmp.dir}/sock`)).mode & 0o777, 0o700);
      t.match(p.endpoint.caCertPath, /egress-ca\.pem$/);
    },
  );

  t.test('curl: an allowed HTTPS host through CONNECT', async (t) => {
    const mark = p.endpoint.mark();
    const r = await curl([
      '--proxy',
      proxyUrl,
      '--cacert',
      `${tmp.dir}/ca.pem`,
      `https://pkgs.test:${https.port}/x`,
    ]);
    t.equal(r.code, 0, 'curl succeeds');
    if (r.code !== 0) t.comment(r.stderr);
    t.equal(r.stdout, `hello from pkgs.test:${https.port}\n`);
    t.same(p.endpoint.refusedSince(mark), []);
  });

  t.test('curl: an allowed plain HTTP host', async (t) => {
    const r = await curl(['--proxy', proxyUrl, `http://plain.test:${http.port}/x?q=1`]);
    t.equal(r.code, 0, 'curl succeeds');
    if (r.code !== 0) t.comment(r.stderr);
    t.equal(r.stdout, `hello from plain.test:${http.port}\n`);
    t.equal(http.seen.at(-1)?.url, '/x?q=1', 'the path and query go on as sent');
  });

  t.test('curl: a refused host is named, with the reason and what to do', async (t) => {
    const mark = p.endpoint.mark();
    const before = p.events.length;
    const r = await curl([
      '-v',
      '--proxy',
      proxyUrl,
      '--cacert',
      `${tmp.dir}/ca.pem`,
      'https://refused.test/',
    ]);
    t.not(r.code, 0);
    t.match(r.stderr, /403 memql egress refused refused\.test:443 \(not_allowed\)/);
    const plain = await curl(['-i', '--proxy', proxyUrl, 'http://refused.test/simple']);
    t.match(plain.stdout, /^HTTP\/1\.1 403 /);
    t.match(plain.stdout, /x-memql-egress: refused; reason=not_allowed/);
    t.match(plain.stdout, /refused refused\.test:80 \(not_allowed\)/);
    t.match(plain.stdout, /PUT \/v1\/runs\/run-1\/network/);
    t.match(plain.stdout, /memql network allow/);
    t.match(plain.stdout, /MEMQL_EGRESS_CEILING/);
    t.same(p.endpoint.refusedSince(mark), [
      { host: 'refused.test', port: 443, reason: 'not_allowed' },
      { host: 'refused.test', port: 80, reason: 'not_allowed' },
    ]);
    const refused = p.events.slice(before);
    t.match(refused, [
      {
        runId: 'run-1',
        host: 'refused.test',
        port: 443,
        allowed: false,
        reason: 'not_allowed',
        bytesUp: 0,
        bytesDown: 0,
      },
      { runId: 'run-1', host: 'refused.test', port: 80, allowed: false, reason: 'not_allowed' },
    ]);
    t.equal(p.calls.get('refused.test'), undefined, 'a refused name is never resolved');
  });

  t.test("Node's clients: HTTPS through CONNECT, and a refused CONNECT's answer", async (t) => {
    const ok = (await httpsGet(p.endpoint.socketPath, 'pkgs.test', https.port, '/n', {
      ca: [pki.caPem],
    })) as Answer;
    t.equal(ok.status, 200);
    t.equal(ok.body, `hello from pkgs.test:${https.port}\n`);
    t.equal(
      ok.peer?.issuer.CN,
      'egress test CA',
      "the client saw the host's own certificate: the tunnel is not touched",
    );
    const refused = await connectTunnel(p.endpoint.socketPath, 'other.test:443');
    t.ok('refused' in refused);
    if (!('refused' in refused)) return;
    t.equal(refused.refused.status, 403);
    t.equal(refused.refused.headers['x-memql-egress'], 'refused; reason=not_allowed');
    t.match(refused.refused.body, /other\.test:443 \(not_allowed\)/);
  });

  t.test('every connection is reported once it ends, with bytes and duration', async (t) => {
    const before = p.events.length;
    const ok = (await httpsGet(p.endpoint.socketPath, 'pkgs.test', https.port, '/n', {
      ca: [pki.caPem],
    })) as Answer;
    t.equal(ok.status, 200);
    const plain = await plainGet(p.endpoint.socketPath, `http://plain.test:${http.port}/n`);
    t.equal(plain.status, 200);
    // A tunnel is reported when it closes, which follows the client's close.
    const find = (host: string) => p.events.slice(before).find((e) => e.host === host);
    await eventually(
      'both connections reported',
      () => !!find('pkgs.test') && !!find('plain.test'),
    );
    t.match(find('pkgs.test'), { port: https.port, allowed: true, address: '127.0.0.1' });
    t.match(find('plain.test'), { port: http.port, allowed: true, address: '127.0.0.1' });
    for (const e of [find('pkgs.test')!, find('plain.test')!]) {
      t.ok(e.bytesUp > 0 && e.bytesDown > 0, `${e.host}: bytes both ways`);
      t.ok(e.durationMs >= 0);
      t.equal(e.reason, undefined);
      t.equal(e.secret, undefined);
    }
  });

  t.test('a policy change applies to the next connection', async (t) => {
    p.policy = NO_EGRESS;
    const mark = p.endpoint.mark();
    const r = await plainGet(p.endpoint.socketPath, `http://plain.test:${http.port}/n`);
    t.equal(r.status, 403);
    t.same(p.endpoint.refusedSince(mark), [
      { host: 'plain.test', port: http.port, reason: 'not_allowed' },
    ]);
    p.policy = { allow: rules('plain.test', 'other.test'), secrets: [] };
    const again = await plainGet(p.endpoint.socketPath, `http://plain.test:${http.port}/n`);
    t.equal(again.status, 200);
    const other = (await httpsGet(p.endpoint.socketPath, 'other.test', https.port, '/n', {
      ca: [pki.caPem],
    })) as Answer;
    t.equal(other.status, 200, 'a rule without a port allows any port');
  });
});
