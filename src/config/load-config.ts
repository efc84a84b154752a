import path from 'node:path';
import { NEEDS } from '../contract/index.js';
import type {
  Config,
  ConfigWarning,
  DatabaseConfig,
  ExecConfig,
  ListenAddress,
  MeshConfig,
  ObjectStoreConfig,
  RunnerConfig,
  WorkerConfig,
} from './config.js';
import { LOG_LEVELS } from './config.js';
import { ConfigError } from './config-error.js';
import { type FileReader, readEgress } from './egress-settings.js';
import { type Env, EnvReader } from './env-reader.js';
import { parseHostPort } from './host-port.js';
import { type Parsed, withShape } from './parsed.js';
import { type PeerSeed, parsePeerSeeds } from './peer-seeds.js';
import { renamedVariables } from './renamed-variables.js';
import { findUnknownVariables } from './unknown-variables.js';
import {
  integerParser,
  oneOfParser,
  parseBearerToken,
  parseBoolean,
  parseBucket,
  parseCidrSetting,
  parseCommandName,
  parseCpus,
  parseHttpUrl,
  parseImageRef,
  parseMeshToken,
  parseNeed,
  parseNodeId,
  parsePostgresUrl,
  parseS3Prefix,
  parseWord,
  pathParser,
} from './value-parsers.js';
import type { ConfigVariableName } from './variables.js';

/** Options of {@link loadConfig}. Each replaces something loadConfig may not look up itself, to stay pure. */
export interface LoadConfigOptions {
  /**
   * `process.platform` of the node. Selects path syntax, and `MEMQL_RUNNER=bwrap`
   * is refused off Linux. Default `'linux'`, the platform nodes are built for.
   */
  readonly platform?: string;
  /** The machine's host name, used as the default `MEMQL_NODE_ID`. Default: none, so `local`. */
  readonly hostname?: string;
  /**
   * Absolute working directory against which relative `MEMQL_DATA_DIR`,
   * `MEMQL_OBJECT_STORE_DIR` and `MEMQL_TLS_*` paths resolve. Default: none,
   * and relative paths are refused.
   */
  readonly cwd?: string;
  /**
   * Defaults that replace the documented ones, by variable name, parsed like
   * environment values. The local binary uses this for laptop-friendly paths,
   * e.g. `{ MEMQL_DATA_DIR: '.data', MEMQL_WORKBENCH_ROOT: '/home/me/memql/.data/workbenches' }`.
   * Default: none.
   */
  readonly defaults?: Readonly<Partial<Record<ConfigVariableName, string>>>;
  /**
   * The node is a worker host: `MEMQL_WORKER_AGENT`, `MEMQL_WORKER_TOKEN` and
   * `MEMQL_WORKER_ROOT` are required. Other nodes leave it off: they never need the
   * worker's settings, and a value set anyway is still checked (a typo is reported
   * wherever it is). Default `false`.
   */
  readonly worker?: boolean;
  /**
   * Reads a file a setting names, whole, as UTF-8 (`readFileSync`): the `file` of a
   * `MEMQL_EGRESS_SECRETS` secret. Default: none, and such a secret is refused.
   */
  readonly readFile?: FileReader;
  /**
   * Whether to read the values of `MEMQL_EGRESS_SECRETS`. Nodes that run commands need
   * them (their egress proxy sends them); a node that only checks a run's secret names
   * does not, and needs no Secret mounted. `'unless-remote'` (the agent node): read them
   * unless `MEMQL_WORKBENCH_REMOTE` is on without `MEMQL_WORKBENCH_LOCAL_FALLBACK`, the
   * one case where the node runs no command itself. Default `true`.
   */
  readonly egressSecretValues?: boolean | 'unless-remote';
}

const positiveMs = integerParser({ min: 1, unit: 'milliseconds' });
const nonNegativeMs = integerParser({ min: 0, unit: 'milliseconds' });
const positiveBytes = integerParser({ min: 1, unit: 'bytes' });
const positiveCount = integerParser({ min: 1 });
const nonNegativeCount = integerParser({ min: 0 });

/** Variables that only mean something with `MEMQL_OBJECT_STORE=s3`. */
const S3_VARIABLES = [
  'MEMQL_S3_BUCKET',
  'MEMQL_S3_ENDPOINT',
  'MEMQL_S3_REGION',
  'MEMQL_S3_PREFIX',
  'MEMQL_S3_FORCE_PATH_STYLE',
  'MEMQL_S3_ACCESS_KEY_ID',
  'MEMQL_S3_SECRET_ACCESS_KEY',
] as const satisfies readonly ConfigVariableName[];

/**
 * Turns an environment into a typed {@link Config}. The only reader of
 * environment variables in the project; it takes the environment as an
 * argument and never reads the process environment itself, so it is pure and runs once, in a
 * binary's `main`.
 *
 * Every variable in CONFIG_VARIABLES is parsed and checked, together with the
 * rules that tie variables to each other. Values are trimmed and an empty
 * value counts as unset.
 *
 * @throws ConfigError listing every problem found, each naming its variable.
 */
export function loadConfig(env: Env, options: LoadConfigOptions = {}): Config {
  const platform = options.platform ?? 'linux';
  const defaults: Partial<Record<ConfigVariableName, string>> = {};
  if (options.hostname !== undefined) defaults.MEMQL_NODE_ID = options.hostname;
  for (const [name, value] of Object.entries(options.defaults ?? {})) {
    if (value !== undefined) defaults[name as ConfigVariableName] = value;
  }
  const r = new EnvReader(env, defaults);
  const paths = { platform, cwd: options.cwd };
  const anyPath = pathParser(paths, false);
  const pathApi = platform === 'win32' ? path.win32 : path.posix;
  const warnings: ConfigWarning[] = [];

  const nodeId = r.required('MEMQL_NODE_ID', parseNodeId);
  const logLevel = r.required('MEMQL_LOG_LEVEL', oneOfParser(LOG_LEVELS));
  const logFormat = r.required(
    'MEMQL_LOG_FORMAT',
    oneOfParser(['auto', 'json', 'pretty'] as const),
  );
  const workbenchRoot = r.required('MEMQL_WORKBENCH_ROOT', pathParser(paths, true));
  const dataDir = r.required('MEMQL_DATA_DIR', anyPath);
  const databaseUrl = r.optional('MEMQL_DATABASE_URL', parsePostgresUrl);
  const database: DatabaseConfig =
    databaseUrl === null && !r.failed('MEMQL_DATABASE_URL')
      ? { kind: 'pglite', dataDir: pathApi.join(dataDir, 'pglite') }
      : { kind: 'postgres', url: databaseUrl ?? '' };
  const objectStore = readObjectStore(r, pathApi.join(dataDir, 'objects'), anyPath);
  const runner = readRunner(r, env, platform, warnings);

  const workbenchRemote = r.required('MEMQL_WORKBENCH_REMOTE', parseBoolean);
  const workbenchLocalFallback = r.required('MEMQL_WORKBENCH_LOCAL_FALLBACK', parseBoolean);
  const peers = readPeers(r, workbenchRemote);

  const config: Config = {
    nodeId,
    logLevel,
    logFormat,
    workbenchRoot,
    dataDir,
    database,
    objectStore,
    runner,
    workbenchRemote,
    workbenchLocalFallback,
    workerPeers: peers.seeds,
    workerPeersRaw: peers.raw,
    hydratedIdleTtlMs: r.required('MEMQL_HYDRATED_IDLE_TTL_MS', nonNegativeMs),
    warmManifestsMax: r.required('MEMQL_WARM_MANIFESTS_MAX', positiveCount),
    cleanupIntervalMs: r.required('MEMQL_CLEANUP_INTERVAL_MS', positiveMs),
    uploadIdleMs: r.required('MEMQL_UPLOAD_IDLE_MS', positiveMs),
    versionRetention: {
      keepCount: r.required('MEMQL_VERSION_KEEP_COUNT', nonNegativeCount),
      keepMs: r.required('MEMQL_VERSION_KEEP_MS', nonNegativeMs),
    },
    processes: {
      maxPerRun: r.required('MEMQL_PROCESS_MAX_PER_RUN', positiveCount),
      maxLifetimeMs: r.required('MEMQL_PROCESS_MAX_LIFETIME_MS', positiveMs),
      syncMs: r.required('MEMQL_PROCESS_SYNC_MS', positiveMs),
    },
    workspaceQuota: {
      maxBytes: r.required('MEMQL_WORKSPACE_MAX_BYTES', positiveBytes),
      maxFiles: r.required('MEMQL_WORKSPACE_MAX_FILES', positiveCount),
    },
    queue: {
      concurrency: r.required('MEMQL_COMMAND_CONCURRENCY', positiveCount),
      leaseMs: r.required('MEMQL_COMMAND_LEASE_MS', positiveMs),
      pollIntervalMs: r.required('MEMQL_QUEUE_POLL_INTERVAL_MS', positiveMs),
      livenessMs: r.required('MEMQL_NODE_LIVENESS_MS', positiveMs),
      handoffWaitMs: r.required('MEMQL_HANDOFF_WAIT_MS', positiveMs),
      followUpLeadMs: r.required('MEMQL_QUEUE_FOLLOW_UP_LEAD_MS', nonNegativeMs),
      retention: {
        commandKeepMs: r.required('MEMQL_COMMAND_KEEP_MS', nonNegativeMs),
        auditKeepMs: r.required('MEMQL_AUDIT_KEEP_MS', nonNegativeMs),
      },
    },
    exec: readExec(r),
    fetch: {
      allowPrivate: r.list('MEMQL_FETCH_ALLOW_PRIVATE', parseCidrSetting),
      maxBytes: r.required('MEMQL_FETCH_MAX_BYTES', positiveBytes),
      timeoutMs: r.required('MEMQL_FETCH_TIMEOUT_MS', positiveMs),
    },
    egress: readEgress(r, {
      env,
      readFile: options.readFile,
      values:
        options.egressSecretValues === 'unless-remote'
          ? !workbenchRemote || workbenchLocalFallback
          : (options.egressSecretValues ?? true),
      warnings,
    }),
    listen: {
      grpc: r.required('MEMQL_GRPC_LISTEN', parseListenAddress),
      http: r.required('MEMQL_HTTP_LISTEN', parseListenAddress),
      metrics: r.optional('MEMQL_METRICS_LISTEN', parseListenAddress),
      grpcAdvertise: r.optional('MEMQL_GRPC_ADVERTISE', (text) =>
        withShape(parseHostPort(text), 'host:port, e.g. 10.0.3.7:50060'),
      ),
    },
    mesh: readMesh(r, anyPath),
    worker: readWorker(r, anyPath, options.worker ?? false),
    unknownVariables: [],
    warnings,
  };

  const unknown = findUnknownVariables(env);
  warnings.push(...unknown.warnings, ...renamedVariables(env));
  if (r.issues.length > 0) throw new ConfigError(r.issues);
  return { ...config, unknownVariables: unknown.names };
}

function parseListenAddress(text: string): Parsed<ListenAddress> {
  return withShape(parseHostPort(text, { allowPortZero: true }), 'host:port, e.g. 127.0.0.1:8080');
}

function readObjectStore(
  r: EnvReader,
  defaultBaseDir: string,
  anyPath: (text: string) => Parsed<string>,
): ObjectStoreConfig {
  const kind = r.required('MEMQL_OBJECT_STORE', oneOfParser(['fs', 's3'] as const));
  const kindKnown = !r.failed('MEMQL_OBJECT_STORE');
  // A setting for the store that is not in use is refused rather than ignored:
  // a bucket named without MEMQL_OBJECT_STORE=s3 would otherwise leave every
  // file on local disk while the operator believes it is in S3.
  const refuseIfSet = (names: readonly ConfigVariableName[], why: string) => {
    for (const name of names) {
      const set = kindKnown ? r.fromEnv(name) : undefined;
      if (set !== undefined) {
        r.report(name, { variable: set.variable, value: r.shown(name, set.text), expected: why });
      }
    }
  };
  if (kind === 'fs') {
    refuseIfSet(
      S3_VARIABLES,
      'it unset while MEMQL_OBJECT_STORE is fs; set MEMQL_OBJECT_STORE=s3 to use S3',
    );
    return { kind, baseDir: r.optional('MEMQL_OBJECT_STORE_DIR', anyPath) ?? defaultBaseDir };
  }
  refuseIfSet(['MEMQL_OBJECT_STORE_DIR'], 'it unset while MEMQL_OBJECT_STORE is s3 (it is for fs)');
  const bucket = r.optional('MEMQL_S3_BUCKET', parseBucket);
  if (bucket === null && !r.failed('MEMQL_S3_BUCKET')) {
    r.report('MEMQL_S3_BUCKET', {
      variable: 'MEMQL_S3_BUCKET',
      value: undefined,
      expected: 'a bucket name, because MEMQL_OBJECT_STORE is s3',
    });
  }
  const accessKeyId = r.optional('MEMQL_S3_ACCESS_KEY_ID', parseWord);
  const secretAccessKey = r.optional('MEMQL_S3_SECRET_ACCESS_KEY', parseWord);
  requirePair(
    r,
    ['MEMQL_S3_ACCESS_KEY_ID', accessKeyId],
    ['MEMQL_S3_SECRET_ACCESS_KEY', secretAccessKey],
  );
  return {
    kind,
    bucket: bucket ?? '',
    prefix: r.optional('MEMQL_S3_PREFIX', parseS3Prefix) ?? '',
    region: r.required('MEMQL_S3_REGION', parseWord),
    endpoint: r.optional('MEMQL_S3_ENDPOINT', parseHttpUrl),
    forcePathStyle: r.required('MEMQL_S3_FORCE_PATH_STYLE', parseBoolean),
    accessKeyId,
    secretAccessKey,
  };
}

/** Two settings that only make sense together: report the missing half. */
function requirePair(
  r: EnvReader,
  [firstName, first]: [ConfigVariableName, string | null],
  [secondName, second]: [ConfigVariableName, string | null],
): void {
  if (r.failed(firstName) || r.failed(secondName) || (first === null) === (second === null)) return;
  const [missing, present] = first === null ? [firstName, secondName] : [secondName, firstName];
  r.report(missing, {
    variable: missing,
    value: undefined,
    expected: `it set together with ${present}, which is set`,
  });
}

function readRunner(
  r: EnvReader,
  env: Env,
  platform: string,
  warnings: ConfigWarning[],
): RunnerConfig {
  // `auto` is accepted so a manifest can spell out the default; it is not an
  // explicit choice of backend.
  const named = r.optional(
    'MEMQL_RUNNER',
    oneOfParser(['auto', 'bwrap', 'docker', 'process'] as const),
  );
  if (named === 'bwrap' && platform !== 'linux') {
    r.report('MEMQL_RUNNER', {
      variable: 'MEMQL_RUNNER',
      value: 'bwrap',
      expected: `docker or process on ${platform}: bwrap needs Linux`,
    });
  }
  const image = r.required('MEMQL_RUNNER_IMAGE', parseImageRef);
  const current = env.MEMQL_RUNNER_IMAGE?.trim();
  const legacy = env.EXECUTION_WORKSPACE_RUNNER_IMAGE?.trim();
  if (current && legacy && current !== legacy) {
    warnings.push({
      variable: 'EXECUTION_WORKSPACE_RUNNER_IMAGE',
      message: `EXECUTION_WORKSPACE_RUNNER_IMAGE=${JSON.stringify(legacy)} is ignored: MEMQL_RUNNER_IMAGE=${JSON.stringify(current)} takes precedence`,
    });
  }
  return { kind: named ?? 'auto', image, explicit: named !== null && named !== 'auto' };
}

function readPeers(r: EnvReader, remote: boolean): { seeds: PeerSeed[]; raw: string } {
  const found = r.lookup('MEMQL_WORKER_PEERS');
  const raw = found?.text ?? '';
  let seeds: PeerSeed[] = [];
  try {
    seeds = parsePeerSeeds(raw, found?.variable).seeds;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    r.reportIssues('MEMQL_WORKER_PEERS', error.issues);
  }
  // Remote mode with no workbench seed refuses every workbench call; say so at
  // boot rather than on the first call.
  if (remote && !r.failed('MEMQL_WORKBENCH_REMOTE') && !r.failed('MEMQL_WORKER_PEERS')) {
    if (!seeds.some((seed) => seed.type === 'workbench')) {
      r.report('MEMQL_WORKER_PEERS', {
        variable: 'MEMQL_WORKER_PEERS',
        value: raw === '' ? undefined : raw,
        expected:
          'a workbench seed (e.g. workbench=workbench:50060) because MEMQL_WORKBENCH_REMOTE is on',
      });
    }
  }
  return { seeds, raw };
}

function readExec(r: EnvReader): ExecConfig {
  const defaultTimeoutMs = r.required('MEMQL_EXEC_TIMEOUT_MS', positiveMs);
  const maxTimeoutMs = r.required('MEMQL_EXEC_MAX_TIMEOUT_MS', positiveMs);
  if (
    defaultTimeoutMs > maxTimeoutMs &&
    !r.failed('MEMQL_EXEC_TIMEOUT_MS') &&
    !r.failed('MEMQL_EXEC_MAX_TIMEOUT_MS')
  ) {
    r.report('MEMQL_EXEC_TIMEOUT_MS', {
      variable: 'MEMQL_EXEC_TIMEOUT_MS',
      value: String(defaultTimeoutMs),
      expected: `at most MEMQL_EXEC_MAX_TIMEOUT_MS (${maxTimeoutMs})`,
    });
  }
  return {
    defaultTimeoutMs,
    maxTimeoutMs,
    outputLimitBytes: r.required('MEMQL_EXEC_OUTPUT_LIMIT_BYTES', positiveBytes),
    memoryLimitBytes: r.required('MEMQL_EXEC_MEMORY_LIMIT_BYTES', positiveBytes),
    pidsLimit: r.required('MEMQL_EXEC_PIDS_LIMIT', positiveCount),
    cpus: r.required('MEMQL_EXEC_CPU_LIMIT', parseCpus),
    allowlistExtra: [...new Set(r.list('MEMQL_EXEC_ALLOWLIST_EXTRA', parseCommandName))],
    sandboxIdleMs: r.required('MEMQL_SANDBOX_IDLE_MS', nonNegativeMs),
    sandboxWarmPool: r.required('MEMQL_SANDBOX_WARM_POOL', nonNegativeCount),
  };
}

function readMesh(r: EnvReader, anyPath: (text: string) => Parsed<string>): MeshConfig {
  const token = r.optional('MEMQL_MESH_TOKEN', parseMeshToken);
  const certFile = r.optional('MEMQL_TLS_CERT_FILE', anyPath);
  const keyFile = r.optional('MEMQL_TLS_KEY_FILE', anyPath);
  const caFile = r.optional('MEMQL_TLS_CA_FILE', anyPath);
  requirePair(r, ['MEMQL_TLS_CERT_FILE', certFile], ['MEMQL_TLS_KEY_FILE', keyFile]);
  const identity = certFile !== null && keyFile !== null ? { certFile, keyFile } : null;
  const tls = identity === null && caFile === null ? null : { identity, caFile };
  return { token, tls, insecure: r.required('MEMQL_MESH_INSECURE', parseBoolean) };
}

/** The variables a worker host cannot start without. */
const WORKER_REQUIRED = [
  'MEMQL_WORKER_AGENT',
  'MEMQL_WORKER_TOKEN',
  'MEMQL_WORKER_ROOT',
] as const satisfies readonly ConfigVariableName[];

function readWorker(
  r: EnvReader,
  anyPath: (text: string) => Parsed<string>,
  required: boolean,
): WorkerConfig | null {
  const agent = r.optional('MEMQL_WORKER_AGENT', (text) =>
    withShape(parseHostPort(text), 'host:port of the agent node, e.g. agent.example.com:50060'),
  );
  const token = r.optional('MEMQL_WORKER_TOKEN', parseBearerToken);
  const root = r.optional('MEMQL_WORKER_ROOT', anyPath);
  const named = r.list('MEMQL_WORKER_PROVIDES', parseNeed);
  const provides = r.isSet('MEMQL_WORKER_PROVIDES')
    ? NEEDS.filter((need) => named.includes(need))
    : null;
  const capacity = r.required('MEMQL_WORKER_CAPACITY', positiveCount);
  if (required) {
    const read = { MEMQL_WORKER_AGENT: agent, MEMQL_WORKER_TOKEN: token, MEMQL_WORKER_ROOT: root };
    for (const name of WORKER_REQUIRED) {
      if (read[name] === null && !r.failed(name)) {
        r.report(name, { variable: name, value: undefined, expected: WORKER_EXPECTED[name] });
      }
    }
  }
  if (agent === null || token === null || root === null) return null;
  return { agent, token, root, provides, capacity };
}

const WORKER_EXPECTED: Readonly<Record<(typeof WORKER_REQUIRED)[number], string>> = {
  MEMQL_WORKER_AGENT:
    "the agent node's gRPC address (host:port) to dial, because this is a worker host",
  MEMQL_WORKER_TOKEN:
    'an API token of the user who owns this worker (make one with `memql tokens create`), because this is a worker host',
  MEMQL_WORKER_ROOT:
    "the directory of the user's files this worker serves, because this is a worker host",
};
