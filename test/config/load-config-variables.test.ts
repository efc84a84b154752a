// Every variable's valid and invalid forms, one table. The completeness check at
// the end fails when a variable is added to CONFIG_VARIABLES without cases here.
import t from 'tap';
import { CONFIG_VARIABLES, type Config, type Env, loadConfig } from '../../src/config/index.js';
import { configErrorOf } from './fixtures/config-test-helpers.js';

interface VariableCases {
  /** The variable under test. */
  readonly name: string;
  /** Other variables the cases need (e.g. `MEMQL_OBJECT_STORE=s3` for `MEMQL_S3_*`). */
  readonly base?: Env;
  /** The part of Config that the variable sets. */
  readonly pick: (config: Config) => unknown;
  /** Value as set, and what `pick` must return. */
  readonly valid: ReadonlyArray<readonly [string, unknown]>;
  /** Values refused with one issue naming the variable. */
  readonly invalid: readonly string[];
  /** Not a secret, but never quoted in an error either (it may hold one by mistake). */
  readonly unquoted?: true;
}

const S3: Env = { MEMQL_OBJECT_STORE: 's3', MEMQL_S3_BUCKET: 'memql-files' };
const s3 = (config: Config) => (config.objectStore.kind === 's3' ? config.objectStore : null);
const relativeAndNul = ['relative/dir', './x', 'a\0b'];
/** The bytes of an IPv4 address, and of an IPv6 address from its leading bytes. */
const v4 = (...bytes: number[]) => Uint8Array.from(bytes);
const v6 = (...leading: number[]) => Uint8Array.from({ length: 16 }, (_, i) => leading[i] ?? 0);
/** The three variables a worker host needs, so the one under test has a worker to set. */
const WORKER: Env = {
  MEMQL_WORKER_AGENT: 'agent:50060',
  MEMQL_WORKER_TOKEN: 'mqt_test',
  MEMQL_WORKER_ROOT: '/home/me',
};
const notPositive = ['abc', '0', '-1', '1.5', '1e3', '0x10', '9007199254740993'];

const TABLE: readonly VariableCases[] = [
  {
    name: 'MEMQL_NODE_ID',
    pick: (c) => c.nodeId,
    valid: [
      ['workbench-0', 'workbench-0'],
      ['  wb_1.prod  ', 'wb_1.prod'],
      ['x'.repeat(128), 'x'.repeat(128)],
    ],
    invalid: ['-lead', 'has space', 'a/b', 'x'.repeat(129), 'ünïcode'],
  },
  {
    name: 'MEMQL_LOG_LEVEL',
    pick: (c) => c.logLevel,
    valid: [
      ['debug', 'debug'],
      ['WARN', 'warn'],
      ['silent', 'silent'],
    ],
    invalid: ['verbose', 'information', '30'],
  },
  {
    name: 'MEMQL_LOG_FORMAT',
    pick: (c) => c.logFormat,
    valid: [
      ['json', 'json'],
      ['Pretty', 'pretty'],
      ['auto', 'auto'],
    ],
    invalid: ['text', 'yes', '1'],
  },
  {
    name: 'MEMQL_WORKBENCH_ROOT',
    pick: (c) => c.workbenchRoot,
    valid: [
      ['/srv/wb/', '/srv/wb'],
      ['/a//b/../c', '/a/c'],
      ['/', '/'],
    ],
    invalid: relativeAndNul,
  },
  {
    name: 'MEMQL_DATA_DIR',
    pick: (c) => [c.dataDir, c.database, c.objectStore],
    valid: [
      [
        '/data/',
        [
          '/data',
          { kind: 'pglite', dataDir: '/data/pglite' },
          { kind: 'fs', baseDir: '/data/objects' },
        ],
      ],
    ],
    invalid: relativeAndNul,
  },
  {
    name: 'MEMQL_DATABASE_URL',
    pick: (c) => c.database,
    valid: [
      ['postgres://u:p@db:5432/memql', { kind: 'postgres', url: 'postgres://u:p@db:5432/memql' }],
      [
        'postgresql://db/memql?sslmode=require',
        { kind: 'postgres', url: 'postgresql://db/memql?sslmode=require' },
      ],
      [
        'postgres:///memql?host=/run/pg',
        { kind: 'postgres', url: 'postgres:///memql?host=/run/pg' },
      ],
    ],
    invalid: ['mysql://db/x', 'not a url', 'http://db/memql', 'db:5432'],
  },
  {
    name: 'MEMQL_OBJECT_STORE',
    pick: (c) => c.objectStore.kind,
    valid: [
      ['fs', 'fs'],
      ['FS', 'fs'],
    ],
    invalid: ['gcs', 'file', 's3 '.repeat(2)],
  },
  {
    name: 'MEMQL_OBJECT_STORE_DIR',
    pick: (c) => c.objectStore,
    valid: [['/objs/', { kind: 'fs', baseDir: '/objs' }]],
    invalid: relativeAndNul,
  },
  {
    name: 'MEMQL_S3_BUCKET',
    base: { MEMQL_OBJECT_STORE: 's3' },
    pick: (c) => s3(c)?.bucket,
    valid: [
      ['memql-files', 'memql-files'],
      ['abc', 'abc'],
      ['a.b_c-d', 'a.b_c-d'],
    ],
    invalid: ['ab', 'has space', '-lead', 'trail-', 'a/b', 'x'.repeat(64)],
  },
  {
    name: 'MEMQL_S3_ENDPOINT',
    base: S3,
    pick: (c) => s3(c)?.endpoint,
    valid: [
      ['http://minio:9000', 'http://minio:9000'],
      ['https://s3.eu-west-1.amazonaws.com', 'https://s3.eu-west-1.amazonaws.com'],
    ],
    invalid: ['minio:9000', 'ftp://files', 'http://', 'nonsense'],
  },
  {
    name: 'MEMQL_S3_REGION',
    base: S3,
    pick: (c) => s3(c)?.region,
    valid: [['eu-west-1', 'eu-west-1']],
    invalid: ['eu west 1'],
  },
  {
    name: 'MEMQL_S3_PREFIX',
    base: S3,
    pick: (c) => s3(c)?.prefix,
    valid: [
      ['memql', 'memql/'],
      ['memql/', 'memql/'],
      ['a/b', 'a/b/'],
    ],
    invalid: ['/memql', 'a b'],
  },
  {
    name: 'MEMQL_S3_FORCE_PATH_STYLE',
    base: S3,
    pick: (c) => s3(c)?.forcePathStyle,
    valid: [
      ['1', true],
      ['TRUE', true],
      ['yes', true],
      ['on', true],
      ['0', false],
      ['False', false],
      ['NO', false],
      ['off', false],
    ],
    invalid: ['maybe', '2', 'y', 'enabled'],
  },
  {
    name: 'MEMQL_S3_ACCESS_KEY_ID',
    base: { ...S3, MEMQL_S3_SECRET_ACCESS_KEY: 'secret' },
    pick: (c) => s3(c)?.accessKeyId,
    valid: [['AKIAEXAMPLE', 'AKIAEXAMPLE']],
    invalid: ['AKIA EXAMPLE'],
  },
  {
    name: 'MEMQL_S3_SECRET_ACCESS_KEY',
    base: { ...S3, MEMQL_S3_ACCESS_KEY_ID: 'AKIAEXAMPLE' },
    pick: (c) => s3(c)?.secretAccessKey,
    valid: [['wJalr/XUtnFEMI+K7MDENG', 'wJalr/XUtnFEMI+K7MDENG']],
    invalid: ['secret with spaces'],
  },
  {
    name: 'MEMQL_RUNNER',
    pick: (c) => c.runner,
    valid: [
      ['bwrap', { kind: 'bwrap', image: 'memql/runner:latest', explicit: true }],
      ['Docker', { kind: 'docker', image: 'memql/runner:latest', explicit: true }],
      ['process', { kind: 'process', image: 'memql/runner:latest', explicit: true }],
      ['auto', { kind: 'auto', image: 'memql/runner:latest', explicit: false }],
    ],
    invalid: ['podman', 'none', 'sandbox'],
  },
  {
    name: 'MEMQL_RUNNER_IMAGE',
    pick: (c) => c.runner.image,
    valid: [
      ['ghcr.io/memql/runner:1.2', 'ghcr.io/memql/runner:1.2'],
      ['reg.local:5000/runner@sha256:abc123', 'reg.local:5000/runner@sha256:abc123'],
    ],
    invalid: ['has space:latest', '-bad', ':tag'],
  },
  {
    name: 'MEMQL_WORKBENCH_REMOTE',
    base: { MEMQL_WORKER_PEERS: 'workbench=workbench:50060' },
    pick: (c) => c.workbenchRemote,
    valid: [
      ['1', true],
      ['yes', true],
      ['0', false],
      ['off', false],
    ],
    invalid: ['enabled', 'remote', '10'],
  },
  {
    name: 'MEMQL_WORKBENCH_LOCAL_FALLBACK',
    pick: (c) => c.workbenchLocalFallback,
    valid: [
      ['On', true],
      ['no', false],
    ],
    invalid: ['y', 'local'],
  },
  {
    name: 'MEMQL_WORKER_PEERS',
    pick: (c) => [c.workerPeers, c.workerPeersRaw],
    valid: [
      [
        ' workbench=workbench:50060 ',
        [
          [{ type: 'workbench', host: 'workbench', port: 50060, raw: 'workbench=workbench:50060' }],
          'workbench=workbench:50060',
        ],
      ],
    ],
    invalid: ['workbench=workbench', 'workbench:50060'],
  },
  {
    name: 'MEMQL_COMMAND_CONCURRENCY',
    pick: (c) => c.queue.concurrency,
    valid: [
      ['8', 8],
      [' 1 ', 1],
    ],
    invalid: notPositive,
  },
  {
    name: 'MEMQL_QUEUE_FOLLOW_UP_LEAD_MS',
    pick: (c) => c.queue.followUpLeadMs,
    valid: [
      ['0', 0],
      ['5000', 5000],
    ],
    invalid: ['-1', '30s'],
  },
  {
    name: 'MEMQL_COMMAND_KEEP_MS',
    pick: (c) => c.queue.retention.commandKeepMs,
    valid: [
      ['0', 0],
      ['86400000', 86_400_000],
    ],
    invalid: ['-1', '30d'],
  },
  {
    name: 'MEMQL_AUDIT_KEEP_MS',
    pick: (c) => c.queue.retention.auditKeepMs,
    valid: [
      ['0', 0],
      ['31536000000', 31_536_000_000],
    ],
    invalid: ['-1', 'a year'],
  },
  {
    name: 'MEMQL_COMMAND_LEASE_MS',
    pick: (c) => c.queue.leaseMs,
    valid: [['60000', 60000]],
    invalid: ['0', '30s', '-5'],
  },
  {
    name: 'MEMQL_NODE_LIVENESS_MS',
    pick: (c) => c.queue.livenessMs,
    valid: [['2500', 2500]],
    invalid: ['0', '10s', '-1'],
  },
  {
    name: 'MEMQL_HANDOFF_WAIT_MS',
    pick: (c) => c.queue.handoffWaitMs,
    valid: [['45000', 45000]],
    invalid: ['0', 'soon'],
  },
  {
    name: 'MEMQL_QUEUE_POLL_INTERVAL_MS',
    pick: (c) => c.queue.pollIntervalMs,
    valid: [['250', 250]],
    invalid: ['0', 'fast'],
  },
  {
    name: 'MEMQL_WORKSPACE_MAX_BYTES',
    pick: (c) => c.workspaceQuota.maxBytes,
    valid: [['1048576', 1_048_576]],
    invalid: ['0', '1G', '-1'],
  },
  {
    name: 'MEMQL_WORKSPACE_MAX_FILES',
    pick: (c) => c.workspaceQuota.maxFiles,
    valid: [['100', 100]],
    invalid: ['0', 'many'],
  },
  {
    name: 'MEMQL_WARM_MANIFESTS_MAX',
    pick: (c) => c.warmManifestsMax,
    valid: [['1', 1]],
    invalid: ['0', '-1', 'many'],
  },
  {
    name: 'MEMQL_HYDRATED_IDLE_TTL_MS',
    pick: (c) => c.hydratedIdleTtlMs,
    valid: [
      ['0', 0],
      ['60000', 60000],
    ],
    invalid: ['-1', '15m', '1.5'],
  },
  {
    name: 'MEMQL_CLEANUP_INTERVAL_MS',
    pick: (c) => c.cleanupIntervalMs,
    valid: [['1000', 1000]],
    invalid: ['0', 'hourly'],
  },
  {
    name: 'MEMQL_UPLOAD_IDLE_MS',
    pick: (c) => c.uploadIdleMs,
    valid: [
      ['60000', 60000],
      ['86400000', 86400000],
    ],
    invalid: ['0', '-5', '1h'],
  },
  {
    name: 'MEMQL_PROCESS_MAX_PER_RUN',
    pick: (c) => c.processes.maxPerRun,
    valid: [
      ['1', 1],
      ['64', 64],
    ],
    invalid: ['0', '-1', 'many'],
  },
  {
    name: 'MEMQL_PROCESS_MAX_LIFETIME_MS',
    pick: (c) => c.processes.maxLifetimeMs,
    valid: [['60000', 60000]],
    invalid: ['0', '1d'],
  },
  {
    name: 'MEMQL_VERSION_KEEP_COUNT',
    pick: (c) => c.versionRetention.keepCount,
    valid: [
      ['0', 0],
      ['25', 25],
    ],
    invalid: ['-1', 'all'],
  },
  {
    name: 'MEMQL_VERSION_KEEP_MS',
    pick: (c) => c.versionRetention.keepMs,
    valid: [
      ['0', 0],
      ['3600000', 3_600_000],
    ],
    invalid: ['-5', 'a day'],
  },
  {
    name: 'MEMQL_PROCESS_SYNC_MS',
    pick: (c) => c.processes.syncMs,
    valid: [['250', 250]],
    invalid: ['0', 'often'],
  },
  {
    name: 'MEMQL_EXEC_TIMEOUT_MS',
    pick: (c) => c.exec.defaultTimeoutMs,
    valid: [
      ['1000', 1000],
      ['3600000', 3600000],
    ],
    invalid: ['0', '2m'],
  },
  {
    name: 'MEMQL_EXEC_MAX_TIMEOUT_MS',
    pick: (c) => c.exec.maxTimeoutMs,
    valid: [
      ['7200000', 7200000],
      ['120000', 120000],
    ],
    invalid: ['0', 'x'],
  },
  {
    name: 'MEMQL_EXEC_OUTPUT_LIMIT_BYTES',
    pick: (c) => c.exec.outputLimitBytes,
    valid: [['65536', 65536]],
    invalid: ['0', '1MiB'],
  },
  {
    name: 'MEMQL_EXEC_MEMORY_LIMIT_BYTES',
    pick: (c) => c.exec.memoryLimitBytes,
    valid: [['536870912', 536870912]],
    invalid: ['512m', '0'],
  },
  {
    name: 'MEMQL_EXEC_PIDS_LIMIT',
    pick: (c) => c.exec.pidsLimit,
    valid: [['64', 64]],
    invalid: ['0', '-5', 'many'],
  },
  {
    name: 'MEMQL_EXEC_CPU_LIMIT',
    pick: (c) => c.exec.cpus,
    valid: [
      ['1', 1],
      ['0.5', 0.5],
      [' 2.25 ', 2.25],
      ['0.01', 0.01],
      ['1024', 1024],
    ],
    invalid: ['0', '0.0', '0.001', '-1', '1e3', '.5', '1.', '1,5', '2 cpus', '1025', 'NaN'],
  },
  {
    name: 'MEMQL_SANDBOX_WARM_POOL',
    pick: (c) => c.exec.sandboxWarmPool,
    valid: [
      ['0', 0],
      ['4', 4],
      ['64', 64],
    ],
    invalid: ['-1', '4 sandboxes', '0.5'],
  },
  {
    name: 'MEMQL_SANDBOX_IDLE_MS',
    pick: (c) => c.exec.sandboxIdleMs,
    valid: [
      ['0', 0],
      ['30000', 30000],
    ],
    invalid: ['-1', '30s', '0.5'],
  },
  {
    name: 'MEMQL_EXEC_ALLOWLIST_EXTRA',
    pick: (c) => c.exec.allowlistExtra,
    valid: [
      ['jq, yq ,jq,', ['jq', 'yq']],
      ['g++,python3.12', ['g++', 'python3.12']],
    ],
    invalid: ['/usr/bin/jq', 'rm -rf', 'a;b', '$(x)'],
  },
  {
    name: 'MEMQL_FETCH_ALLOW_PRIVATE',
    pick: (c) => c.fetch.allowPrivate,
    valid: [
      [
        '127.0.0.0/8, fd00::/8,',
        [
          { family: 4, bytes: v4(127, 0, 0, 0), prefixLength: 8, text: '127.0.0.0/8' },
          { family: 6, bytes: v6(0xfd), prefixLength: 8, text: 'fd00::/8' },
        ],
      ],
      [
        '10.1.2.3/32',
        [{ family: 4, bytes: v4(10, 1, 2, 3), prefixLength: 32, text: '10.1.2.3/32' }],
      ],
      ['10.1.2.3/8', [{ family: 4, bytes: v4(10, 0, 0, 0), prefixLength: 8, text: '10.0.0.0/8' }]],
      ['::/0', [{ family: 6, bytes: v6(), prefixLength: 0, text: '::/0' }]],
    ],
    invalid: [
      '127.0.0.1',
      '10.0.0.0/33',
      'fd00::/129',
      '300.0.0.0/8',
      'localhost/8',
      '10.0.0.0/',
      '10.0.0.0/-1',
      '10.0.0.0/08',
      '010.0.0.0/8',
      '127.1/8',
      'fe80::1%eth0/64',
      '[::1]/128',
    ],
  },
  {
    name: 'MEMQL_EGRESS_CEILING',
    pick: (c) => c.egress.ceiling,
    valid: [
      [
        'pypi.org, *.pythonhosted.org,github.com:443,PyPI.org,',
        [
          { host: 'pypi.org', port: null },
          { host: '*.pythonhosted.org', port: null },
          { host: 'github.com', port: 443 },
        ],
      ],
    ],
    invalid: ['10.0.0.1', 'pypi.org:0', '*.org', 'a b', 'http://pypi.org'],
  },
  {
    name: 'MEMQL_EGRESS_SECRETS',
    base: { GH_TOKEN: 'ghp_x' },
    unquoted: true,
    pick: (c) => c.egress.secrets,
    valid: [
      [
        '{"gh": {"hosts": ["github.com"], "header": "Authorization", "prefix": "Bearer ", "env": "GH_TOKEN"}}',
        [
          {
            name: 'gh',
            hosts: [{ host: 'github.com', port: null }],
            header: 'Authorization',
            value: 'Bearer ghp_x',
          },
        ],
      ],
      ['{}', []],
    ],
    invalid: [
      'gh=Authorization@github.com',
      '["gh"]',
      '{"gh": {}}',
      '{"gh": {"hosts": ["github.com"], "header": "Authorization", "env": "NOT_SET_HERE"}}',
    ],
  },
  {
    name: 'MEMQL_EGRESS_RESOLVE',
    pick: (c) => c.egress.resolve,
    valid: [
      [
        'Mirror.Test=10.0.0.7, mirror.test=fd00::1',
        [
          { host: 'mirror.test', address: '10.0.0.7' },
          { host: 'mirror.test', address: 'fd00::1' },
        ],
      ],
    ],
    invalid: ['mirror.test', 'mirror.test=010.0.0.7', '10.0.0.7=10.0.0.8', 'a=b=c'],
  },
  {
    name: 'MEMQL_EGRESS_CA_FILE',
    pick: (c) => c.egress.caPem,
    valid: [['', null]],
    // This table reads no files: a path is refused as unreadable.
    invalid: ['/etc/ssl/certs/ca-certificates.crt'],
  },
  {
    name: 'MEMQL_FETCH_MAX_BYTES',
    pick: (c) => c.fetch.maxBytes,
    valid: [['1024', 1024]],
    invalid: ['10MB', '0'],
  },
  {
    name: 'MEMQL_FETCH_TIMEOUT_MS',
    pick: (c) => c.fetch.timeoutMs,
    valid: [['5000', 5000]],
    invalid: ['0', '5s'],
  },
  {
    name: 'MEMQL_GRPC_LISTEN',
    pick: (c) => c.listen.grpc,
    valid: [
      ['0.0.0.0:0', { host: '0.0.0.0', port: 0 }],
      ['[::]:50060', { host: '::', port: 50060 }],
      ['localhost:1', { host: 'localhost', port: 1 }],
    ],
    invalid: ['50060', '::1:50060', 'host:65536', '[::1]', 'host:', ':50060'],
  },
  {
    name: 'MEMQL_HTTP_LISTEN',
    pick: (c) => c.listen.http,
    valid: [['[::1]:8081', { host: '::1', port: 8081 }]],
    invalid: ['8080', 'localhost:http'],
  },
  {
    name: 'MEMQL_METRICS_LISTEN',
    pick: (c) => c.listen.metrics,
    valid: [['127.0.0.1:9464', { host: '127.0.0.1', port: 9464 }]],
    invalid: [':9464', '127.0.0.1'],
  },
  {
    name: 'MEMQL_GRPC_ADVERTISE',
    pick: (c) => c.listen.grpcAdvertise,
    valid: [
      ['10.244.1.17:50060', { host: '10.244.1.17', port: 50060 }],
      ['[fd00::7]:50060', { host: 'fd00::7', port: 50060 }],
      ['agent-0.agent:50060', { host: 'agent-0.agent', port: 50060 }],
    ],
    invalid: ['10.244.1.17', '10.244.1.17:0', ':50060'],
  },
  {
    name: 'MEMQL_MESH_TOKEN',
    pick: (c) => c.mesh.token,
    valid: [['0123456789abcdef', '0123456789abcdef']],
    invalid: ['short-token', 'sixteen chars but spaced'],
  },
  {
    name: 'MEMQL_TLS_CERT_FILE',
    base: { MEMQL_TLS_KEY_FILE: '/tls/key.pem' },
    pick: (c) => c.mesh.tls,
    valid: [
      [
        '/tls/cert.pem',
        { identity: { certFile: '/tls/cert.pem', keyFile: '/tls/key.pem' }, caFile: null },
      ],
    ],
    invalid: relativeAndNul,
  },
  {
    name: 'MEMQL_TLS_KEY_FILE',
    base: { MEMQL_TLS_CERT_FILE: '/tls/cert.pem' },
    pick: (c) => c.mesh.tls?.identity,
    valid: [['/tls/key.pem', { certFile: '/tls/cert.pem', keyFile: '/tls/key.pem' }]],
    invalid: relativeAndNul,
  },
  {
    name: 'MEMQL_TLS_CA_FILE',
    pick: (c) => c.mesh.tls,
    valid: [['/tls/ca.pem', { identity: null, caFile: '/tls/ca.pem' }]],
    invalid: relativeAndNul,
  },
  {
    name: 'MEMQL_MESH_INSECURE',
    pick: (c) => c.mesh.insecure,
    valid: [
      ['1', true],
      ['ON', true],
      ['false', false],
    ],
    invalid: ['insecure', '2'],
  },
  {
    name: 'MEMQL_WORKER_AGENT',
    base: WORKER,
    pick: (c) => c.worker?.agent,
    valid: [
      ['agent.example.com:50060', { host: 'agent.example.com', port: 50060 }],
      ['[::1]:7000', { host: '::1', port: 7000 }],
    ],
    invalid: ['agent', 'agent:0', 'agent:99999', '::1:50060'],
  },
  {
    name: 'MEMQL_WORKER_TOKEN',
    base: WORKER,
    pick: (c) => c.worker?.token,
    valid: [['  mqt_abc-DEF_123  ', 'mqt_abc-DEF_123']],
    invalid: ['has space', 'tab\there', 'ünïcode'],
  },
  {
    name: 'MEMQL_WORKER_ROOT',
    base: WORKER,
    pick: (c) => c.worker?.root,
    valid: [
      ['/home/me/work/', '/home/me/work'],
      ['/', '/'],
    ],
    invalid: ['a\0b'],
  },
  {
    name: 'MEMQL_WORKER_PROVIDES',
    base: WORKER,
    pick: (c) => c.worker?.provides,
    valid: [
      ['gpu, display', ['display', 'gpu']],
      ['USER_FILES,user_files', ['user_files']],
      ['macos_tooling', ['macos_tooling']],
    ],
    invalid: ['screen', 'display,macos-tooling'],
  },
  {
    name: 'MEMQL_WORKER_CAPACITY',
    base: WORKER,
    pick: (c) => c.worker?.capacity,
    valid: [
      ['1', 1],
      ['16', 16],
    ],
    invalid: notPositive,
  },
];

const SECRETS = new Set(
  CONFIG_VARIABLES.filter((v) => 'secret' in v && v.secret).map((v) => v.name as string),
);

for (const { name, base = {}, pick, valid, invalid, unquoted } of TABLE) {
  t.test(name, async (t) => {
    for (const [value, expected] of valid) {
      const config = loadConfig({ ...base, [name]: value });
      t.strictSame(pick(config), expected, `${name}=${JSON.stringify(value)}`);
    }
    for (const value of invalid) {
      const label = `${name}=${JSON.stringify(value)}`;
      const error = configErrorOf(() => loadConfig({ ...base, [name]: value }));
      t.strictSame(
        error.issues.map((issue) => issue.variable),
        [name],
        `${label} is one issue naming the variable`,
      );
      const issue = error.issues[0]!;
      t.equal(error.variable, name);
      t.ok(issue.message.startsWith(`${name}=`), `${label}: ${issue.message}`);
      t.match(issue.message, /: expected \S/, `${label} says what is expected`);
      if (SECRETS.has(name) || unquoted) {
        t.equal(issue.value, '[redacted]', `${label}: value redacted`);
        t.notOk(error.message.includes(value), `${label}: secret absent from the message`);
      } else {
        t.equal(issue.value, value.trim(), `${label}: value kept`);
        t.ok(
          issue.message.includes(JSON.stringify(value.trim())),
          `${label}: message quotes the value`,
        );
      }
    }
  });
}

t.test('every variable has valid and invalid cases in this table', async (t) => {
  const covered = new Map(TABLE.map((row) => [row.name, row]));
  for (const variable of CONFIG_VARIABLES) {
    const row = covered.get(variable.name);
    t.ok(row && row.valid.length > 0 && row.invalid.length > 0, variable.name);
  }
  t.equal(TABLE.length, CONFIG_VARIABLES.length, 'no stray rows');
});
