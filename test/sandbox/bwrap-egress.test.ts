import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { BwrapRunner } from '../../src/sandbox/bwrap/index.js';
import type { RunSpec } from '../../src/sandbox/runner.js';
import { rules } from './egress/egress-fixture.js';
import { startSandboxEgress } from './sandbox-egress.js';
import { makeWorkspace } from './sandbox-support.js';

/**
 * A command's way to the network, end to end on the real bwrap runner: the run's proxy
 * (the node's own, in this process) on a Unix socket bound into the sandbox, the bridge
 * inside it, and the proxy variables, with loopback servers standing in for the
 * internet. curl, pip, npm and git reach what the run's rules allow and nothing else;
 * a command without egress has no network at all.
 */

const egress = await startSandboxEgress(t, { blobBytes: 64 * 1024 });
const { internet, endpoint, bundle } = egress;

const runner = new BwrapRunner();
const probe = await runner.probe();
if (!probe.ok) throw new Error(`bwrap runner unusable: ${probe.reason}`);

async function run(command: string, extra: Partial<RunSpec> = {}) {
  const workspaceDir = await makeWorkspace(t);
  const result = await runner.run({
    workspaceDir,
    command,
    timeoutMs: 120_000,
    outputLimitBytes: 1 << 20,
    egress: { socketPath: endpoint.socketPath, caBundlePath: bundle },
    ...extra,
  });
  return {
    ...result,
    out: result.stdout.toString('utf8'),
    err: result.stderr.toString('utf8'),
    workspaceDir,
  };
}

const url = (host: string, path: string) => `https://${host}:${internet.port}${path}`;

t.test('curl reaches an allowed host through the bridge; a refused one is named', async (t) => {
  const ok = await run(`curl -sS -o blob ${url('blobs.test', '/blob')} && wc -c < blob`);
  t.equal(ok.exitCode, 0, ok.err);
  t.equal(ok.out.trim(), String(internet.blob.length));
  t.equal(
    (await readFile(join(ok.workspaceDir, 'blob'))).equals(internet.blob),
    true,
    'byte for byte',
  );
  const mark = endpoint.mark();
  const refused = await run('curl -sS -i -x "$HTTPS_PROXY" https://example.com/ || true');
  t.match(refused.out, /403/);
  t.match(refused.out, /example\.com/);
  t.match(endpoint.refusedSince(mark), [{ host: 'example.com', port: 443 }]);
});

t.test('pip installs from an HTTPS index, npm from a registry, git clones', async (t) => {
  const pip = await run(
    `python3 -m pip install --no-cache-dir --disable-pip-version-check --target lib --index-url ${url('pypi.test', '/simple')} memql-probe && PYTHONPATH=lib python3 -c "import memql_probe; print(memql_probe.GREETING)"`,
  );
  t.equal(pip.exitCode, 0, pip.err);
  t.match(pip.out, 'hello from the test index');
  const npm = await run(
    `npm install --no-audit --no-fund --cache /tmp/npm-cache --registry ${url('registry.test', '/')} memql-probe >/dev/null && node -e "console.log(require('memql-probe'))"`,
    { env: { HOME: '/tmp' } },
  );
  t.equal(npm.exitCode, 0, npm.err);
  t.match(npm.out, 'hello from the test registry');
  const git = await run(`git clone -q ${url('git.test', '/probe.git')} probe && cat probe/README`);
  t.equal(git.exitCode, 0, git.err);
  t.match(git.out, 'a repository served by the test internet');
});

t.test('the caller cannot point the proxy elsewhere', async (t) => {
  const r = await run('echo "$HTTPS_PROXY $https_proxy $SSL_CERT_FILE"', {
    env: {
      HTTPS_PROXY: 'http://10.0.0.1:8080',
      https_proxy: 'http://10.0.0.1:8080',
      SSL_CERT_FILE: '/tmp/x',
    },
  });
  t.equal(r.out.trim(), 'http://127.0.0.1:3128 http://127.0.0.1:3128 /run/memql/ca-bundle.pem');
});

t.test('a rule taken away applies to the next connection', async (t) => {
  const before = egress.policy;
  egress.policy = { allow: rules('pypi.test'), secrets: [] };
  t.teardown(() => {
    egress.policy = before;
  });
  const r = await run(
    `curl -sS -o /dev/null -w '%{http_code}' ${url('blobs.test', '/blob')} || true`,
  );
  t.notMatch(r.out, /^200/);
});

t.test('without egress a command has no network, and /var/tmp is there and empty', async (t) => {
  const workspaceDir = await makeWorkspace(t);
  const none = await runner.run({
    workspaceDir,
    command: `curl -sS --max-time 5 ${url('blobs.test', '/blob')}; curl -sS --max-time 5 http://127.0.0.1:3128/; ls /run/memql 2>&1; echo "[$HTTPS_PROXY]"`,
    timeoutMs: 60_000,
    outputLimitBytes: 1 << 20,
  });
  const out = none.stdout.toString('utf8');
  t.match(out, '[]', 'no proxy variable');
  t.notMatch(out, /^200/m);
  t.match(
    none.stderr.toString('utf8'),
    /Could not resolve host|Failed to connect|Couldn't connect/,
  );
  for (let i = 0; i < 2; i++) {
    const tmp = await run(
      'ls -A /var/tmp | wc -l; touch /var/tmp/.bench_ephemeral_check && echo wrote',
    );
    t.same(tmp.out.split('\n').slice(0, 2), ['0', 'wrote'], 'empty at each command, writable');
  }
});
