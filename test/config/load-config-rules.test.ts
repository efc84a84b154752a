// Rules that tie variables together, option handling, error collection and the
// shape of ConfigError.
import t from 'tap';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { configErrorOf, issuesOf } from './fixtures/config-test-helpers.js';

const variablesOf = (fn: () => unknown) => issuesOf(fn).map((issue) => issue.variable);

t.test('a single problem: message, variable and value', async (t) => {
  const error = configErrorOf(() => loadConfig({ MEMQL_COMMAND_CONCURRENCY: 'abc' }));
  t.ok(error instanceof ConfigError);
  t.ok(error instanceof Error);
  t.equal(error.name, 'ConfigError');
  t.equal(error.message, 'MEMQL_COMMAND_CONCURRENCY="abc": expected a positive integer');
  t.equal(error.variable, 'MEMQL_COMMAND_CONCURRENCY');
  t.equal(error.value, 'abc');
  t.strictSame(error.issues, [
    {
      variable: 'MEMQL_COMMAND_CONCURRENCY',
      value: 'abc',
      expected: 'a positive integer',
      message: 'MEMQL_COMMAND_CONCURRENCY="abc": expected a positive integer',
    },
  ]);
});

t.test('every problem is collected into one error', async (t) => {
  const error = configErrorOf(() =>
    loadConfig({
      MEMQL_LOG_LEVEL: 'loud',
      MEMQL_WORKBENCH_REMOTE: 'maybe',
      MEMQL_WORKER_PEERS: 'workbench=ok:1,workbench,worker=b',
      MEMQL_COMMAND_CONCURRENCY: 'abc',
      MEMQL_FETCH_ALLOW_PRIVATE: '10.0.0.0/8,nope',
      MEMQL_MESH_TOKEN: 'short',
    }),
  );
  t.strictSame(
    error.issues.map((issue) => [issue.variable, issue.entry]),
    [
      ['MEMQL_LOG_LEVEL', undefined],
      ['MEMQL_WORKBENCH_REMOTE', undefined],
      ['MEMQL_WORKER_PEERS', 'workbench'],
      ['MEMQL_WORKER_PEERS', 'worker=b'],
      ['MEMQL_COMMAND_CONCURRENCY', undefined],
      ['MEMQL_FETCH_ALLOW_PRIVATE', 'nope'],
      ['MEMQL_MESH_TOKEN', undefined],
    ],
  );
  t.equal(error.variable, 'MEMQL_LOG_LEVEL', 'the first issue is repeated on the error');
  t.match(error.message, /^invalid configuration \(7 problems\):\n/);
  for (const issue of error.issues) t.ok(error.message.includes(issue.message), issue.message);
});

t.test('s3 requires a bucket', async (t) => {
  const [issue, ...rest] = issuesOf(() => loadConfig({ MEMQL_OBJECT_STORE: 's3' }));
  t.strictSame(rest, []);
  t.equal(issue?.variable, 'MEMQL_S3_BUCKET');
  t.equal(issue?.value, '');
  t.match(issue?.message, /^MEMQL_S3_BUCKET is not set: expected a bucket name/);
});

t.test('a complete s3 configuration', async (t) => {
  const config = loadConfig({
    MEMQL_OBJECT_STORE: 'S3',
    MEMQL_S3_BUCKET: 'memql-files',
    MEMQL_S3_ENDPOINT: 'http://minio:9000',
    MEMQL_S3_REGION: 'eu-central-1',
    MEMQL_S3_PREFIX: 'prod',
    MEMQL_S3_FORCE_PATH_STYLE: 'true',
    MEMQL_S3_ACCESS_KEY_ID: 'minio',
    MEMQL_S3_SECRET_ACCESS_KEY: 'minio-secret',
  });
  t.strictSame(config.objectStore, {
    kind: 's3',
    bucket: 'memql-files',
    prefix: 'prod/',
    region: 'eu-central-1',
    endpoint: 'http://minio:9000',
    forcePathStyle: true,
    accessKeyId: 'minio',
    secretAccessKey: 'minio-secret',
  });
  t.strictSame(loadConfig({ MEMQL_OBJECT_STORE: 's3', MEMQL_S3_BUCKET: 'b-1' }).objectStore, {
    kind: 's3',
    bucket: 'b-1',
    prefix: '',
    region: 'us-east-1',
    endpoint: null,
    forcePathStyle: false,
    accessKeyId: null,
    secretAccessKey: null,
  });
});

t.test('settings of the store not in use are refused, not ignored', async (t) => {
  t.strictSame(
    variablesOf(() => loadConfig({ MEMQL_S3_BUCKET: 'memql-files', MEMQL_S3_REGION: 'eu-west-1' })),
    ['MEMQL_S3_BUCKET', 'MEMQL_S3_REGION'],
  );
  t.strictSame(
    variablesOf(() =>
      loadConfig({
        MEMQL_OBJECT_STORE: 's3',
        MEMQL_S3_BUCKET: 'bkt',
        MEMQL_OBJECT_STORE_DIR: '/objs',
      }),
    ),
    ['MEMQL_OBJECT_STORE_DIR'],
  );
  // With the store kind itself wrong there is nothing to compare against.
  t.strictSame(
    variablesOf(() => loadConfig({ MEMQL_OBJECT_STORE: 'gcs', MEMQL_S3_BUCKET: 'bkt' })),
    ['MEMQL_OBJECT_STORE'],
  );
  const secret = issuesOf(() => loadConfig({ MEMQL_S3_SECRET_ACCESS_KEY: 'topsecret' }))[0];
  t.equal(secret?.variable, 'MEMQL_S3_SECRET_ACCESS_KEY');
  t.equal(secret?.value, '[redacted]');
  t.notOk(secret?.message.includes('topsecret'));
});

t.test('the S3 key id and secret come together', async (t) => {
  const base = { MEMQL_OBJECT_STORE: 's3', MEMQL_S3_BUCKET: 'bkt' };
  t.strictSame(
    variablesOf(() => loadConfig({ ...base, MEMQL_S3_ACCESS_KEY_ID: 'id' })),
    ['MEMQL_S3_SECRET_ACCESS_KEY'],
  );
  t.strictSame(
    variablesOf(() => loadConfig({ ...base, MEMQL_S3_SECRET_ACCESS_KEY: 'sec' })),
    ['MEMQL_S3_ACCESS_KEY_ID'],
  );
});

t.test('the TLS certificate and key come together; a CA may stand alone', async (t) => {
  t.strictSame(
    variablesOf(() => loadConfig({ MEMQL_TLS_CERT_FILE: '/tls/c.pem' })),
    ['MEMQL_TLS_KEY_FILE'],
  );
  t.strictSame(
    variablesOf(() => loadConfig({ MEMQL_TLS_KEY_FILE: '/tls/k.pem' })),
    ['MEMQL_TLS_CERT_FILE'],
  );
  t.strictSame(
    loadConfig({
      MEMQL_TLS_CERT_FILE: '/tls/c.pem',
      MEMQL_TLS_KEY_FILE: '/tls/k.pem',
      MEMQL_TLS_CA_FILE: '/tls/ca.pem',
    }).mesh.tls,
    { identity: { certFile: '/tls/c.pem', keyFile: '/tls/k.pem' }, caFile: '/tls/ca.pem' },
  );
  // A bad key path is reported as such, not also as a missing key.
  t.strictSame(
    variablesOf(() =>
      loadConfig({ MEMQL_TLS_CERT_FILE: '/tls/c.pem', MEMQL_TLS_KEY_FILE: 'k.pem' }),
    ),
    ['MEMQL_TLS_KEY_FILE'],
  );
});

t.test('the exec default timeout may not exceed the maximum', async (t) => {
  const [issue, ...rest] = issuesOf(() =>
    loadConfig({ MEMQL_EXEC_TIMEOUT_MS: '5000', MEMQL_EXEC_MAX_TIMEOUT_MS: '4999' }),
  );
  t.strictSame(rest, []);
  t.equal(issue?.variable, 'MEMQL_EXEC_TIMEOUT_MS');
  t.equal(issue?.value, '5000');
  t.match(issue?.message, /MEMQL_EXEC_MAX_TIMEOUT_MS \(4999\)/);
  t.strictSame(
    variablesOf(() => loadConfig({ MEMQL_EXEC_MAX_TIMEOUT_MS: '1000' })),
    ['MEMQL_EXEC_TIMEOUT_MS'],
  );
  const equal = loadConfig({
    MEMQL_EXEC_TIMEOUT_MS: '5000',
    MEMQL_EXEC_MAX_TIMEOUT_MS: '5000',
  }).exec;
  t.equal(equal.defaultTimeoutMs, 5000);
  t.equal(equal.maxTimeoutMs, 5000);
  t.strictSame(
    variablesOf(() => loadConfig({ MEMQL_EXEC_MAX_TIMEOUT_MS: 'x' })),
    ['MEMQL_EXEC_MAX_TIMEOUT_MS'],
  );
});

t.test('EXECUTION_WORKSPACE_RUNNER_IMAGE is an alias of MEMQL_RUNNER_IMAGE', async (t) => {
  const legacy = loadConfig({ EXECUTION_WORKSPACE_RUNNER_IMAGE: 'legacy/runner:1' });
  t.equal(legacy.runner.image, 'legacy/runner:1');
  t.strictSame(legacy.warnings, []);
  t.strictSame(legacy.unknownVariables, []);

  const both = loadConfig({
    MEMQL_RUNNER_IMAGE: 'memql/runner:2',
    EXECUTION_WORKSPACE_RUNNER_IMAGE: 'legacy/runner:1',
  });
  t.equal(both.runner.image, 'memql/runner:2', 'MEMQL_RUNNER_IMAGE wins');
  t.strictSame(
    both.warnings.map((w) => w.variable),
    ['EXECUTION_WORKSPACE_RUNNER_IMAGE'],
  );
  const same = loadConfig({
    MEMQL_RUNNER_IMAGE: 'x/y:1',
    EXECUTION_WORKSPACE_RUNNER_IMAGE: 'x/y:1',
  });
  t.strictSame(same.warnings, [], 'no warning when both agree');

  const bad = issuesOf(() => loadConfig({ EXECUTION_WORKSPACE_RUNNER_IMAGE: 'bad image' }));
  t.strictSame(
    bad.map((i) => [i.variable, i.value]),
    [['EXECUTION_WORKSPACE_RUNNER_IMAGE', 'bad image']],
    'the issue names the alias that was actually set',
  );
});

t.test('remote mode needs a workbench seed, even with the local fallback', async (t) => {
  const none = issuesOf(() => loadConfig({ MEMQL_WORKBENCH_REMOTE: '1' }));
  t.strictSame(
    none.map((i) => [i.variable, i.value]),
    [['MEMQL_WORKER_PEERS', '']],
  );
  t.match(none[0]?.message, /^MEMQL_WORKER_PEERS is not set: expected a workbench seed/);
  t.strictSame(
    variablesOf(() =>
      loadConfig({ MEMQL_WORKBENCH_REMOTE: 'yes', MEMQL_WORKER_PEERS: 'worker=w:1' }),
    ),
    ['MEMQL_WORKER_PEERS'],
  );
  t.strictSame(
    variablesOf(() =>
      loadConfig({ MEMQL_WORKBENCH_REMOTE: 'on', MEMQL_WORKBENCH_LOCAL_FALLBACK: 'on' }),
    ),
    ['MEMQL_WORKER_PEERS'],
  );
  // A malformed peer list is reported once, by entry, without a second complaint.
  t.strictSame(
    issuesOf(() =>
      loadConfig({ MEMQL_WORKBENCH_REMOTE: '1', MEMQL_WORKER_PEERS: 'workbench=wb' }),
    ).map((i) => i.entry),
    ['workbench=wb'],
  );
  const ok = loadConfig({
    MEMQL_WORKBENCH_REMOTE: '1',
    MEMQL_WORKER_PEERS: 'worker=w:1, workbench=workbench:50060',
  });
  t.equal(ok.workbenchRemote, true);
  t.equal(ok.workerPeersRaw, 'worker=w:1, workbench=workbench:50060');
  t.equal(ok.workerPeers.length, 2);
  t.equal(loadConfig({ MEMQL_WORKBENCH_LOCAL_FALLBACK: '1' }).workbenchLocalFallback, true);
});

t.test('platform: bwrap needs Linux; Windows paths on win32', async (t) => {
  t.strictSame(
    variablesOf(() => loadConfig({ MEMQL_RUNNER: 'bwrap' }, { platform: 'darwin' })),
    ['MEMQL_RUNNER'],
  );
  t.equal(loadConfig({}, { platform: 'darwin' }).runner.kind, 'auto');
  t.equal(loadConfig({ MEMQL_RUNNER: 'docker' }, { platform: 'darwin' }).runner.kind, 'docker');
  t.equal(
    loadConfig({ MEMQL_RUNNER: 'bwrap' }).runner.kind,
    'bwrap',
    'the default platform is linux',
  );
  const win = loadConfig(
    { MEMQL_WORKBENCH_ROOT: 'C:\\memql\\wb\\', MEMQL_DATA_DIR: 'C:\\memql\\data' },
    { platform: 'win32' },
  );
  t.equal(win.workbenchRoot, 'C:\\memql\\wb');
  t.strictSame(win.database, { kind: 'pglite', dataDir: 'C:\\memql\\data\\pglite' });
  t.strictSame(
    variablesOf(() => loadConfig({ MEMQL_WORKBENCH_ROOT: 'C:\\memql\\wb' })),
    ['MEMQL_WORKBENCH_ROOT'],
  );
});

t.test('relative paths resolve against cwd, except the workbench root', async (t) => {
  const config = loadConfig(
    {
      MEMQL_DATA_DIR: './.data/',
      MEMQL_OBJECT_STORE_DIR: '../objects',
      MEMQL_TLS_CA_FILE: 'tls/ca.pem',
    },
    { cwd: '/home/me/repo' },
  );
  t.equal(config.dataDir, '/home/me/repo/.data');
  t.strictSame(config.objectStore, { kind: 'fs', baseDir: '/home/me/objects' });
  t.strictSame(config.mesh.tls, { identity: null, caFile: '/home/me/repo/tls/ca.pem' });
  t.strictSame(
    variablesOf(() => loadConfig({ MEMQL_WORKBENCH_ROOT: 'wb' }, { cwd: '/home/me/repo' })),
    ['MEMQL_WORKBENCH_ROOT'],
  );
  t.strictSame(
    variablesOf(() => loadConfig({ MEMQL_DATA_DIR: '.data' }, { cwd: 'not/absolute' })),
    ['MEMQL_DATA_DIR'],
  );
});

t.test('unknown MEMQL_* variables are returned and warned about, never fatal', async (t) => {
  const config = loadConfig({
    MEMQL_WORKER_PEER: 'workbench=wb:50060',
    MEMQL_ZZZ_SOMETHING_ELSE: '1',
    MEMQL_EMPTY_BUT_SET: '',
    MEMQL_NOT_SET: undefined,
    OTHER_VARIABLE: 'x',
    PATH: '/usr/bin',
  });
  t.strictSame(config.unknownVariables, [
    'MEMQL_EMPTY_BUT_SET',
    'MEMQL_WORKER_PEER',
    'MEMQL_ZZZ_SOMETHING_ELSE',
  ]);
  t.strictSame(config.workerPeers, [], 'the misspelt variable is not read');
  const byName = new Map(config.warnings.map((w) => [w.variable, w.message]));
  t.match(byName.get('MEMQL_WORKER_PEER'), /did you mean MEMQL_WORKER_PEERS\?/);
  t.notMatch(byName.get('MEMQL_ZZZ_SOMETHING_ELSE'), /did you mean/);
});

t.test('a database URL in an error never shows its password', async (t) => {
  const [issue] = issuesOf(() => loadConfig({ MEMQL_DATABASE_URL: 'mysql://memql:hunter2@db/x' }));
  t.equal(issue?.variable, 'MEMQL_DATABASE_URL');
  t.equal(issue?.value, 'mysql://memql:[redacted]@db/x');
  t.notOk(issue?.message.includes('hunter2'));
});

t.test('a worker host requires its agent, token and root; other nodes do not', async (t) => {
  t.equal(loadConfig({}).worker, null, 'no worker settings on other nodes');
  t.same(
    variablesOf(() => loadConfig({}, { worker: true })),
    ['MEMQL_WORKER_AGENT', 'MEMQL_WORKER_TOKEN', 'MEMQL_WORKER_ROOT'],
  );
  const error = configErrorOf(() => loadConfig({}, { worker: true }));
  t.match(error.issues[1]?.message, /MEMQL_WORKER_TOKEN is not set: .*memql tokens create/);
  const env = {
    MEMQL_WORKER_AGENT: 'agent:50060',
    MEMQL_WORKER_TOKEN: 'mqt_secret-value',
    MEMQL_WORKER_ROOT: 'files',
  };
  t.strictSame(loadConfig(env, { worker: true, cwd: '/home/me' }).worker, {
    agent: { host: 'agent', port: 50060 },
    token: 'mqt_secret-value',
    root: '/home/me/files',
    provides: null,
    capacity: 4,
  });
  // A bad value is reported wherever it is set, worker or not; the token never shown.
  const bad = configErrorOf(() =>
    loadConfig({ ...env, MEMQL_WORKER_TOKEN: 'two words' }, { cwd: '/home/me' }),
  );
  t.same(
    bad.issues.map((i) => [i.variable, i.value]),
    [['MEMQL_WORKER_TOKEN', '[redacted]']],
  );
});

t.test('MEMQL_WORKER_CONCURRENCY, the old name, is read with a warning', async (t) => {
  const old = loadConfig({ MEMQL_WORKER_CONCURRENCY: '7' });
  t.equal(old.queue.concurrency, 7);
  t.match(old.warnings, [
    {
      variable: 'MEMQL_WORKER_CONCURRENCY',
      message: /old name of MEMQL_COMMAND_CONCURRENCY .*rename it/,
    },
  ]);
  const both = loadConfig({ MEMQL_WORKER_CONCURRENCY: '7', MEMQL_COMMAND_CONCURRENCY: '3' });
  t.equal(both.queue.concurrency, 3, 'the new name wins');
  t.match(both.warnings, [{ variable: 'MEMQL_WORKER_CONCURRENCY', message: /is ignored/ }]);
  t.same(loadConfig({ MEMQL_COMMAND_CONCURRENCY: '3' }).warnings, [], 'no warning otherwise');
});
