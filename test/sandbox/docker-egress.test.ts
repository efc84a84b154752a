import { randomBytes } from 'node:crypto';
import t from 'tap';
import { DockerRunner } from '../../src/sandbox/docker/index.js';
import {
  connectTestDocker,
  makeSandboxWorkspace,
  removeContainersLabelled,
  TEST_RUNNER_IMAGE,
} from '../support/docker.js';
import { startSandboxEgress } from './sandbox-egress.js';

/**
 * The docker runner's way to the network: the same proxy socket, CA bundle and cache
 * directory as bwrap's, bound into a container that has no network but loopback, with
 * the bridge started before the command. pip installs from an HTTPS index and Python's
 * own HTTP client downloads through the proxy; a refused host is named; a container
 * without egress reaches nothing.
 */

const { internet, endpoint, bundle, cacheDir } = await startSandboxEgress(t, {
  blobBytes: 128 * 1024,
});

const docker = await connectTestDocker();
const TEST_LABEL = 'memql.test';
const testRun = randomBytes(6).toString('hex');
const runner = new DockerRunner({
  docker,
  image: TEST_RUNNER_IMAGE,
  labels: { [TEST_LABEL]: testRun },
});
t.teardown(() => removeContainersLabelled(docker, TEST_LABEL, testRun));

async function run(command: string, egress = true) {
  const workspace = await makeSandboxWorkspace();
  t.teardown(() => workspace.remove());
  const result = await runner.run({
    workspaceDir: workspace.dir,
    command,
    timeoutMs: 120_000,
    outputLimitBytes: 1 << 20,
    ...(egress
      ? { egress: { socketPath: endpoint.socketPath, caBundlePath: bundle, cacheDir } }
      : {}),
  });
  return { ...result, out: result.stdout.toString('utf8'), err: result.stderr.toString('utf8') };
}

const url = (host: string, path: string) => `https://${host}:${internet.port}${path}`;
const download = (target: string) =>
  `python3 -c "import urllib.request,sys; print(len(urllib.request.urlopen(sys.argv[1]).read()))" ${target}`;

t.test(
  'pip installs and Python downloads through the proxy, caching in the run cache',
  async (t) => {
    const pip = await run(
      `python3 -m pip install --disable-pip-version-check --break-system-packages --target lib --index-url ${url('pypi.test', '/simple')} memql-probe && cd lib && python3 -c "import memql_probe; print(memql_probe.GREETING)" && python3 -m pip cache dir`,
    );
    t.equal(pip.exitCode, 0, pip.err);
    t.match(pip.out, 'hello from the test index');
    t.match(pip.out, '/run/memql/cache/pip', "pip's cache is the run's");
    const got = await run(download(url('blobs.test', '/blob')));
    t.equal(got.exitCode, 0, got.err);
    t.equal(got.out.trim(), String(internet.blob.length));
  },
);

t.test('a refused host is named; without egress nothing is reached', async (t) => {
  const mark = endpoint.mark();
  const refused = await run(download('https://example.com/'));
  t.not(refused.exitCode, 0);
  t.match(refused.err, /403/);
  t.match(endpoint.refusedSince(mark), [{ host: 'example.com', port: 443, reason: 'not_allowed' }]);
  const before = internet.requests.length;
  const none = await run(download(url('blobs.test', '/blob')), false);
  t.not(none.exitCode, 0);
  t.equal(internet.requests.length, before, 'no request got out');
});
