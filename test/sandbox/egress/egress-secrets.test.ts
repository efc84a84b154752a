import { readFile } from 'node:fs/promises';
import t from 'tap';
import { eventually } from '../../support/mesh.js';
import {
  type Answer,
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

// Secrets by reference: the proxy adds an opted-in secret's header to requests to its
// hosts only, terminating the sandbox's TLS for exactly those hosts with a leaf of the
// node CA, and verifying the upstream itself. The canary value must show up at the
// upstream server and nowhere the client, the reports or the logs can see.

const CANARY = 'Bearer canary-5f0c1e7d-secret-value';
const SECRET = {
  name: 'index-token',
  hosts: rules('secret.test'),
  header: 'Authorization',
  value: CANARY,
};

t.test('the secret goes upstream to its host only, and nowhere else', async (t) => {
  const tmp = await scratch('egs-');
  t.teardown(tmp.done);
  const pki = await makeTestPki(tmp.dir, ['secret.test', 'pkgs.test']);
  const https = await startHttpsUpstream(pki);
  const http = await startHttpUpstream();
  t.teardown(() => https.close());
  t.teardown(() => http.close());
  const p = await startProxy({
    dir: tmp.dir,
    policy: { allow: rules('secret.test', 'pkgs.test'), secrets: ['index-token'] },
    resolver: { 'secret.test': ['127.0.0.1'], 'pkgs.test': ['127.0.0.1'] },
    allowPrivate: LOOPBACK,
    secrets: [SECRET],
    upstreamCa: [pki.caPem],
  });
  t.teardown(() => p.close());
  const nodeCa = await readFile(p.endpoint.caCertPath, 'utf8');
  const bridge = await startBridge(p.endpoint.socketPath);
  t.teardown(() => bridge.close());
  const seenClient: string[] = [];

  t.test("Node's client: the header is replaced upstream, the leaf is the node CA's", async (t) => {
    const r = (await httpsGet(p.endpoint.socketPath, 'secret.test', https.port, '/simple', {
      ca: [nodeCa],
      headers: { authorization: 'Bearer made-by-the-client', 'x-kept': 'yes' },
    })) as Answer;
    t.equal(r.status, 200);
    seenClient.push(JSON.stringify(r));
    const up = https.seen.at(-1)!;
    t.equal(up.headers.authorization, CANARY, 'the secret replaced what the client sent');
    t.equal(up.headers['x-kept'], 'yes');
    t.equal(up.headers.host, `secret.test:${https.port}`);
    t.match(r.peer?.issuer.CN, /^memql-workbench egress CA /);
    t.equal(r.peer?.subject.CN, 'secret.test');
  });

  t.test(
    'curl (OpenSSL) trusts the leaf through the node CA; two requests on one connection',
    async (t) => {
      const before = https.seen.length;
      const url = `https://secret.test:${https.port}`;
      const r = await curl([
        '-v',
        '--proxy',
        `http://127.0.0.1:${bridge.port}`,
        '--cacert',
        p.endpoint.caCertPath,
        `${url}/one`,
        `${url}/two`,
      ]);
      t.equal(r.code, 0, 'curl succeeds');
      if (r.code !== 0) t.comment(r.stderr);
      t.match(r.stderr, /Re-using existing connection|left intact/);
      seenClient.push(r.stdout, r.stderr);
      const got = https.seen.slice(before);
      t.same(
        got.map((s) => [s.url, s.headers.authorization]),
        [
          ['/one', CANARY],
          ['/two', CANARY],
        ],
      );
    },
  );

  t.test('another allowed host: no header, and its TLS is not touched', async (t) => {
    const r = (await httpsGet(p.endpoint.socketPath, 'pkgs.test', https.port, '/simple', {
      ca: [pki.caPem],
    })) as Answer;
    t.equal(r.status, 200);
    t.equal(r.peer?.issuer.CN, 'egress test CA', "the host's own certificate");
    t.equal(https.seen.at(-1)?.headers.authorization, undefined);
    seenClient.push(JSON.stringify(r));
  });

  t.test('plain HTTP to the secret host: the secret is never sent in clear text', async (t) => {
    const r = await plainGet(p.endpoint.socketPath, `http://secret.test:${http.port}/simple`);
    t.equal(r.status, 200);
    t.equal(http.seen.at(-1)?.headers.authorization, undefined);
    seenClient.push(JSON.stringify(r));
  });

  t.test('a server that echoes the credential in a header: the header is dropped', async (t) => {
    const r = (await httpsGet(p.endpoint.socketPath, 'secret.test', https.port, '/echo-auth', {
      ca: [nodeCa],
    })) as Answer;
    t.equal(r.status, 200);
    t.equal(r.headers['x-echo'], undefined);
    seenClient.push(JSON.stringify(r));
  });

  t.test('the reports name the secret, never its value', async (t) => {
    await eventually('the secret host reported', () =>
      p.events.some((e) => e.host === 'secret.test' && e.port === https.port),
    );
    const secretOnes = p.events.filter((e) => e.host === 'secret.test' && e.port === https.port);
    t.ok(secretOnes.every((e) => e.secret === 'index-token' && e.allowed));
    t.ok(p.events.filter((e) => e.host === 'pkgs.test').every((e) => e.secret === undefined));
    t.notMatch(JSON.stringify(p.events), 'canary');
    t.notMatch(p.logText(), 'canary');
    t.notMatch(seenClient.join('\n'), 'canary', 'the client side never saw it');
  });
});

t.test('a run that did not opt in gets a plain tunnel', async (t) => {
  const tmp = await scratch('egs-');
  t.teardown(tmp.done);
  const pki = await makeTestPki(tmp.dir, ['secret.test']);
  const https = await startHttpsUpstream(pki);
  t.teardown(() => https.close());
  const p = await startProxy({
    dir: tmp.dir,
    policy: { allow: rules('secret.test'), secrets: [] },
    resolver: { 'secret.test': ['127.0.0.1'] },
    allowPrivate: LOOPBACK,
    secrets: [SECRET],
    upstreamCa: [pki.caPem],
  });
  t.teardown(() => p.close());
  const r = (await httpsGet(p.endpoint.socketPath, 'secret.test', https.port, '/', {
    ca: [pki.caPem],
  })) as Answer;
  t.equal(r.status, 200);
  t.equal(r.peer?.issuer.CN, 'egress test CA');
  t.equal(https.seen.at(-1)?.headers.authorization, undefined);
});

t.test('an upstream whose certificate does not verify gets no secret: 502', async (t) => {
  const tmp = await scratch('egs-');
  t.teardown(tmp.done);
  const pki = await makeTestPki(tmp.dir, ['secret.test']);
  const https = await startHttpsUpstream(pki);
  t.teardown(() => https.close());
  const p = await startProxy({
    dir: tmp.dir,
    policy: { allow: rules('secret.test'), secrets: ['index-token'] },
    resolver: { 'secret.test': ['127.0.0.1'] },
    allowPrivate: LOOPBACK,
    secrets: [SECRET],
    // No upstreamCa: the test CA is not trusted upstream.
  });
  t.teardown(() => p.close());
  const nodeCa = await readFile(p.endpoint.caCertPath, 'utf8');
  const mark = p.endpoint.mark();
  const r = (await httpsGet(p.endpoint.socketPath, 'secret.test', https.port, '/', {
    ca: [nodeCa],
  })) as Answer;
  t.equal(r.status, 502);
  t.equal(r.headers['x-memql-egress'], 'refused; reason=upstream_failed');
  t.match(r.body, /secret\.test:\d+ could not be reached \([A-Z_]+\)/);
  t.notMatch(JSON.stringify(r), 'canary');
  t.equal(https.seen.length, 0, 'no request reached the server');
  t.same(p.endpoint.refusedSince(mark), [
    { host: 'secret.test', port: https.port, reason: 'upstream_failed' },
  ]);
  await eventually('reported', () => p.events.length > 0);
  t.notMatch(JSON.stringify(p.events) + p.logText(), 'canary');
});
