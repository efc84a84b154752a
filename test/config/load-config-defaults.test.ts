import t from 'tap';
import { type Config, loadConfig } from '../../src/config/index.js';

/** The whole configuration of an empty environment: every documented default. */
const DEFAULTS: Config = {
  nodeId: 'local',
  logLevel: 'info',
  logFormat: 'auto',
  workbenchRoot: '/var/lib/memql/workbenches',
  dataDir: '/var/lib/memql/data',
  database: { kind: 'pglite', dataDir: '/var/lib/memql/data/pglite' },
  objectStore: { kind: 'fs', baseDir: '/var/lib/memql/data/objects' },
  runner: { kind: 'auto', image: 'memql/runner:latest', explicit: false },
  workbenchRemote: false,
  workbenchLocalFallback: false,
  workerPeers: [],
  workerPeersRaw: '',
  hydratedIdleTtlMs: 900_000,
  warmManifestsMax: 256,
  cleanupIntervalMs: 300_000,
  uploadIdleMs: 3_600_000,
  versionRetention: { keepCount: 100, keepMs: 86_400_000 },
  processes: { maxPerRun: 8, maxLifetimeMs: 86_400_000, syncMs: 5000 },
  workspaceQuota: { maxBytes: 4_294_967_296, maxFiles: 250_000 },
  queue: {
    concurrency: 4,
    leaseMs: 30_000,
    pollIntervalMs: 1_000,
    livenessMs: 10_000,
    handoffWaitMs: 30_000,
    followUpLeadMs: 30_000,
    retention: { commandKeepMs: 2_592_000_000, auditKeepMs: 7_776_000_000 },
  },
  exec: {
    defaultTimeoutMs: 120_000,
    maxTimeoutMs: 3_600_000,
    outputLimitBytes: 1_048_576,
    memoryLimitBytes: 1_073_741_824,
    pidsLimit: 256,
    cpus: 1,
    allowlistExtra: [],
    sandboxIdleMs: 30_000,
    sandboxWarmPool: 4,
  },
  fetch: { allowPrivate: [], maxBytes: 10_485_760, timeoutMs: 30_000 },
  egress: { ceiling: [], secretNames: [], secrets: [], resolve: [], caPem: null },
  listen: {
    grpc: { host: '0.0.0.0', port: 50060 },
    http: { host: '127.0.0.1', port: 8080 },
    metrics: null,
    grpcAdvertise: null,
  },
  mesh: { token: null, tls: null, insecure: false },
  worker: null,
  unknownVariables: [],
  warnings: [],
};

t.test('an empty environment yields every documented default', async (t) => {
  t.strictSame(loadConfig({}), DEFAULTS);
});

t.test('empty and blank values count as unset', async (t) => {
  const blank = {
    MEMQL_COMMAND_CONCURRENCY: '',
    MEMQL_LOG_LEVEL: '   ',
    MEMQL_WORKBENCH_REMOTE: '',
    MEMQL_DATABASE_URL: ' ',
    MEMQL_WORKER_PEERS: '',
    MEMQL_RUNNER: '\t',
  };
  t.strictSame(loadConfig(blank), DEFAULTS);
});

t.test('undefined values count as unset', async (t) => {
  t.strictSame(
    loadConfig({ MEMQL_COMMAND_CONCURRENCY: undefined, MEMQL_TYPO: undefined }),
    DEFAULTS,
  );
});

t.test('the node id defaults to the host name passed in, and the environment wins', async (t) => {
  t.equal(loadConfig({}, { hostname: 'workbench-1' }).nodeId, 'workbench-1');
  t.equal(loadConfig({ MEMQL_NODE_ID: 'wb-7' }, { hostname: 'workbench-1' }).nodeId, 'wb-7');
  const bad = (() => {
    try {
      loadConfig({}, { hostname: 'bad host' });
    } catch (error) {
      return error as { issues: Array<{ variable: string; value: string; message: string }> };
    }
    return null;
  })();
  t.strictSame(
    bad?.issues.map((i) => [i.variable, i.value]),
    [['MEMQL_NODE_ID', 'bad host']],
  );
  t.match(bad?.issues[0]?.message, /default the binary supplied/);
});

t.test('a binary can replace defaults; the environment still wins', async (t) => {
  const local = {
    MEMQL_DATA_DIR: '.data',
    MEMQL_WORKBENCH_ROOT: '/home/me/repo/.data/workbenches',
  };
  const config = loadConfig({}, { cwd: '/home/me/repo', defaults: local });
  t.equal(config.dataDir, '/home/me/repo/.data');
  t.equal(config.workbenchRoot, '/home/me/repo/.data/workbenches');
  t.strictSame(config.database, { kind: 'pglite', dataDir: '/home/me/repo/.data/pglite' });
  t.strictSame(config.objectStore, { kind: 'fs', baseDir: '/home/me/repo/.data/objects' });
  const overridden = loadConfig(
    { MEMQL_DATA_DIR: '/srv/data' },
    { cwd: '/home/me/repo', defaults: local },
  );
  t.equal(overridden.dataDir, '/srv/data');
  t.equal(
    loadConfig({}, { defaults: { MEMQL_COMMAND_CONCURRENCY: undefined } }).queue.concurrency,
    4,
  );
});

t.test('loadConfig never reads process.env', async (t) => {
  const saved = process.env.MEMQL_COMMAND_CONCURRENCY;
  process.env.MEMQL_COMMAND_CONCURRENCY = 'not-a-number';
  process.env.MEMQL_SOME_TYPO = 'x';
  try {
    t.strictSame(loadConfig({}), DEFAULTS);
  } finally {
    if (saved === undefined) delete process.env.MEMQL_COMMAND_CONCURRENCY;
    else process.env.MEMQL_COMMAND_CONCURRENCY = saved;
    delete process.env.MEMQL_SOME_TYPO;
  }
});
