import type { CidrRange, HostRule, Need } from '../contract/index.js';
import type { HostPort } from './host-port.js';
import type { PeerSeed } from './peer-seeds.js';

// The typed configuration of a node. Every field is set by loadConfig from one
// or more variables in CONFIG_VARIABLES (named in each field's doc); durations
// are in milliseconds and sizes in bytes, and the field names say so. Absent
// optional settings are `null` rather than missing, so a logged config shows
// that they are off.

/** pino's log levels. */
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** Every accepted {@link LogLevel}. */
export const LOG_LEVELS: readonly LogLevel[] = [
  'fatal',
  'error',
  'warn',
  'info',
  'debug',
  'trace',
  'silent',
];

/** Where rows are kept. */
export type DatabaseConfig =
  | {
      /** A Postgres server (`MEMQL_DATABASE_URL` is set). */
      readonly kind: 'postgres';
      /** The connection URL, password included: log redactConfig's copy, never this. */
      readonly url: string;
    }
  | {
      /** Embedded PGlite (`MEMQL_DATABASE_URL` is unset). */
      readonly kind: 'pglite';
      /** PGlite's directory, `<MEMQL_DATA_DIR>/pglite`. */
      readonly dataDir: string;
    };

/** Where file bytes are kept (`MEMQL_OBJECT_STORE`). */
export type ObjectStoreConfig =
  | {
      /** Files under a local directory, the embedded default. */
      readonly kind: 'fs';
      /** `MEMQL_OBJECT_STORE_DIR`, default `<MEMQL_DATA_DIR>/objects`. */
      readonly baseDir: string;
    }
  | {
      /** An S3 or S3-compatible bucket. */
      readonly kind: 's3';
      /** `MEMQL_S3_BUCKET` (required). */
      readonly bucket: string;
      /** `MEMQL_S3_PREFIX`: `''` or a prefix ending in `/`. Default `''`. */
      readonly prefix: string;
      /** `MEMQL_S3_REGION`, default `us-east-1`. */
      readonly region: string;
      /** `MEMQL_S3_ENDPOINT`; `null` means AWS itself. */
      readonly endpoint: string | null;
      /** `MEMQL_S3_FORCE_PATH_STYLE`, default `false`. */
      readonly forcePathStyle: boolean;
      /** `MEMQL_S3_ACCESS_KEY_ID`; `null` (with the secret) means the SDK's credential chain. */
      readonly accessKeyId: string | null;
      /** `MEMQL_S3_SECRET_ACCESS_KEY`; set exactly when `accessKeyId` is. Secret. */
      readonly secretAccessKey: string | null;
    };

/** A sandbox backend choice; `auto` leaves the probe (bwrap on Linux if present) to the sandbox part. */
export type RunnerKind = 'auto' | 'bwrap' | 'docker' | 'process';

/** Which sandbox runs commands (`MEMQL_RUNNER`, `MEMQL_RUNNER_IMAGE`). */
export interface RunnerConfig {
  /** `auto` when `MEMQL_RUNNER` is unset. */
  readonly kind: RunnerKind;
  /** Image for the `docker` runner; default `memql/runner:latest`. */
  readonly image: string;
  /**
   * The operator named the runner. Only an explicit `process` may run commands
   * without isolation; `auto` finding no sandbox means refusing (`no_sandbox`).
   */
  readonly explicit: boolean;
}

/** The durable command queue. */
export interface QueueConfig {
  /**
   * `MEMQL_COMMAND_CONCURRENCY`: commands run at once on this node. Default 4, on any
   * machine: `os.availableParallelism()` reports a container's host CPUs, not its quota,
   * and the right number depends on the command mix and memory limits; queue wait is
   * the signal to raise it.
   */
  readonly concurrency: number;
  /** `MEMQL_COMMAND_LEASE_MS`: lease of a running command. Default 30000 ms. */
  readonly leaseMs: number;
  /** `MEMQL_QUEUE_POLL_INTERVAL_MS`: idle poll period. Default 1000 ms. */
  readonly pollIntervalMs: number;
  /** `MEMQL_NODE_LIVENESS_MS`: silence after which a node counts as gone. Default 10000 ms. */
  readonly livenessMs: number;
  /** `MEMQL_HANDOFF_WAIT_MS`: a call's wait for a draining holder's handoff. Default 30000 ms. */
  readonly handoffWaitMs: number;
  /**
   * `MEMQL_QUEUE_FOLLOW_UP_LEAD_MS`: how far before its arrival a run's later command may
   * stand in the queue; 0 is first come, first served. Default 30000 ms.
   */
  readonly followUpLeadMs: number;
  /**
   * `MEMQL_COMMAND_KEEP_MS` and `MEMQL_AUDIT_KEEP_MS`: how long finished command rows
   * and audit events are kept; 0 keeps them until their run is deleted. Defaults
   * 2592000000 ms (30 days) and 7776000000 ms (90 days).
   */
  readonly retention: { readonly commandKeepMs: number; readonly auditKeepMs: number };
}

/** Limits of the `exec` action and its sandbox. */
export interface ExecConfig {
  /** `MEMQL_EXEC_TIMEOUT_MS`: timeout when the call names none. Default 120000 ms. */
  readonly defaultTimeoutMs: number;
  /** `MEMQL_EXEC_MAX_TIMEOUT_MS`: largest timeout a call may ask for. Default 3600000 ms; never below `defaultTimeoutMs`. */
  readonly maxTimeoutMs: number;
  /** `MEMQL_EXEC_OUTPUT_LIMIT_BYTES`: kept per stream. Default 1048576 bytes (1 MiB). */
  readonly outputLimitBytes: number;
  /** `MEMQL_EXEC_MEMORY_LIMIT_BYTES`: sandbox memory. Default 1073741824 bytes (1 GiB). */
  readonly memoryLimitBytes: number;
  /** `MEMQL_EXEC_PIDS_LIMIT`: sandbox processes. Default 256. */
  readonly pidsLimit: number;
  /** `MEMQL_EXEC_CPU_LIMIT`: CPU time per wall-clock time of one sandbox, in CPUs. Default 1. */
  readonly cpus: number;
  /** `MEMQL_EXEC_ALLOWLIST_EXTRA`: command names added to the allowlist, deduplicated. Default none. */
  readonly allowlistExtra: string[];
  /** `MEMQL_SANDBOX_IDLE_MS`: how long a warm bwrap sandbox waits for its run's next command. Default 30000 ms; 0 disables. */
  readonly sandboxIdleMs: number;
  /** `MEMQL_SANDBOX_WARM_POOL`: bwrap sandboxes kept ready ahead of any run. Default 4; 0 disables. */
  readonly sandboxWarmPool: number;
}

/** Limits of the `fetch` action. */
export interface FetchConfig {
  /**
   * `MEMQL_FETCH_ALLOW_PRIVATE`: private ranges fetch may reach, parsed here once (host
   * bits cleared) and handed to fetch as they are. Default none.
   */
  readonly allowPrivate: readonly CidrRange[];
  /** `MEMQL_FETCH_MAX_BYTES`: largest body. Default 10485760 bytes (10 MiB). */
  readonly maxBytes: number;
  /** `MEMQL_FETCH_TIMEOUT_MS`: time limit. Default 30000 ms. */
  readonly timeoutMs: number;
}

/**
 * An operator-defined secret a run may opt into: the egress proxy adds `header: value`
 * to requests to `hosts`. The value is secret: redacted when config is logged.
 */
export interface EgressSecret {
  /** The name runs opt in by (`network.secrets`). */
  name: string;
  /** The hosts the header is sent to, and no others. */
  hosts: HostRule[];
  /** The header's name, e.g. `Authorization`. */
  header: string;
  /** The header's value: the prefix and what the file or variable holds. Secret. */
  value: string;
}

/** What a run's commands may reach on the network (`MEMQL_EGRESS_*`). */
export interface EgressConfig {
  /** `MEMQL_EGRESS_CEILING`: the most any run may be given, deduplicated. Default none. */
  readonly ceiling: readonly HostRule[];
  /** The names `MEMQL_EGRESS_SECRETS` defines, in its order. Default none. */
  readonly secretNames: readonly string[];
  /**
   * The secrets with their values, in the same order; empty on a node that reads the
   * names only (`LoadConfigOptions.egressSecretValues`: agent nodes). Secret.
   */
  readonly secrets: readonly EgressSecret[];
  /**
   * `MEMQL_EGRESS_RESOLVE`: names the proxy resolves to these addresses instead of
   * asking DNS (each address still passes the address policy). Default none.
   */
  readonly resolve: readonly EgressResolveEntry[];
  /**
   * The certificates (PEM) of `MEMQL_EGRESS_CA_FILE`, trusted by the proxy upstream and
   * by every sandbox with network, beside the system's; null when unset or not read
   * (nodes that read the secret names only).
   */
  readonly caPem: string | null;
}

/** One entry of `MEMQL_EGRESS_RESOLVE`. */
export interface EgressResolveEntry {
  /** A host name, normalized (lower case, no trailing dot). */
  readonly host: string;
  /** An IPv4 or IPv6 address in plain notation. */
  readonly address: string;
}

/** An address to listen on. */
export interface ListenAddress {
  /** Host or IP; an IPv6 address without brackets. */
  readonly host: string;
  /** TCP port; 0 asks the OS for a free one. */
  readonly port: number;
}

/** The servers this node opens. */
export interface ListenConfig {
  /** `MEMQL_GRPC_LISTEN`, default `0.0.0.0:50060`. */
  readonly grpc: ListenAddress;
  /** `MEMQL_HTTP_LISTEN`, default `127.0.0.1:8080`. */
  readonly http: ListenAddress;
  /** `MEMQL_METRICS_LISTEN`; `null`: no metrics server. */
  readonly metrics: ListenAddress | null;
  /**
   * `MEMQL_GRPC_ADVERTISE`: where other agent replicas reach this node's gRPC listener
   * to forward calls to the worker hosts connected here; `null`: the listen address,
   * when its host is not a wildcard.
   */
  readonly grpcAdvertise: ListenAddress | null;
}

/** This node's TLS certificate and key, which only come as a pair. */
export interface TlsIdentity {
  /** `MEMQL_TLS_CERT_FILE`: PEM certificate path. */
  readonly certFile: string;
  /** `MEMQL_TLS_KEY_FILE`: PEM private key path. */
  readonly keyFile: string;
}

/** Mesh TLS; present when any `MEMQL_TLS_*` variable is set. */
export interface MeshTlsConfig {
  /** This node's certificate and key; `null` for a node that only verifies its peers. */
  readonly identity: TlsIdentity | null;
  /** `MEMQL_TLS_CA_FILE`; `null`: the system roots. */
  readonly caFile: string | null;
}

/** How nodes authenticate each other. */
export interface MeshConfig {
  /** `MEMQL_MESH_TOKEN`; `null`: no token. Secret. */
  readonly token: string | null;
  /** `null`: plaintext gRPC. */
  readonly tls: MeshTlsConfig | null;
  /**
   * `MEMQL_MESH_INSECURE`: a workbench node may serve the mesh on a non-loopback
   * address with neither a token nor mutual TLS (see meshExposure). Default `false`.
   */
  readonly insecure: boolean;
}

/**
 * A worker host's settings: where it dials, as whom, and what it serves. Only the
 * worker binary asks for them (`LoadConfigOptions.worker`); other nodes ignore them.
 */
export interface WorkerConfig {
  /** `MEMQL_WORKER_AGENT`: the agent node's gRPC address. Required. */
  readonly agent: HostPort;
  /** `MEMQL_WORKER_TOKEN`: an API token of the worker's user. Required. Secret. */
  readonly token: string;
  /** `MEMQL_WORKER_ROOT`: absolute, without trailing `/`. Required. */
  readonly root: string;
  /** `MEMQL_WORKER_PROVIDES`, deduplicated in the closed set's order; `null`: detect. */
  readonly provides: readonly Need[] | null;
  /** `MEMQL_WORKER_CAPACITY`: calls run at once. Default 4. */
  readonly capacity: number;
}

/** Something worth a WARNING line at boot that does not stop the node. */
export interface ConfigWarning {
  /** The variable concerned. */
  readonly variable: string;
  /** What to tell the operator. */
  readonly message: string;
}

/** A node's whole configuration, as returned by loadConfig. */
export interface Config {
  /** `MEMQL_NODE_ID`. Default: the host name the binary passes in, else `local`. */
  readonly nodeId: string;
  /** `MEMQL_LOG_LEVEL`, default `info`. */
  readonly logLevel: LogLevel;
  /** `MEMQL_LOG_FORMAT`, default `auto` (pretty on a terminal, JSON otherwise). */
  readonly logFormat: 'auto' | 'json' | 'pretty';
  /** `MEMQL_WORKBENCH_ROOT`: absolute, without trailing `/`. Default `/var/lib/memql/workbenches`. */
  readonly workbenchRoot: string;
  /** `MEMQL_DATA_DIR`: absolute. Default `/var/lib/memql/data` (the local binary passes `./.data`). */
  readonly dataDir: string;
  /** From `MEMQL_DATABASE_URL`. */
  readonly database: DatabaseConfig;
  /** From `MEMQL_OBJECT_STORE` and its `MEMQL_OBJECT_STORE_DIR` / `MEMQL_S3_*` settings. */
  readonly objectStore: ObjectStoreConfig;
  /** From `MEMQL_RUNNER` and `MEMQL_RUNNER_IMAGE`. */
  readonly runner: RunnerConfig;
  /** `MEMQL_WORKBENCH_REMOTE`: send workbench calls to a peer, refusing when none is healthy. Default `false`. */
  readonly workbenchRemote: boolean;
  /** `MEMQL_WORKBENCH_LOCAL_FALLBACK`: the only way a remote call may run locally. Default `false`. */
  readonly workbenchLocalFallback: boolean;
  /** `MEMQL_WORKER_PEERS`, parsed. Default none. */
  readonly workerPeers: PeerSeed[];
  /** `MEMQL_WORKER_PEERS` as set (trimmed), quoted by `no_workbench_peer` messages. Default `''`. */
  readonly workerPeersRaw: string;
  /** `MEMQL_HYDRATED_IDLE_TTL_MS`: warm reuse of a hydrated workspace; 0 disables. Default 900000 ms. */
  readonly hydratedIdleTtlMs: number;
  /** `MEMQL_WARM_MANIFESTS_MAX`: most warm workspaces whose manifest is kept in memory. Default 256 runs. */
  readonly warmManifestsMax: number;
  /** `MEMQL_CLEANUP_INTERVAL_MS`: sweeper period. Default 300000 ms. */
  readonly cleanupIntervalMs: number;
  /** `MEMQL_UPLOAD_IDLE_MS`: how long an upload's stage lives with no new part. Default 3600000 ms. */
  readonly uploadIdleMs: number;
  /**
   * `MEMQL_VERSION_KEEP_COUNT` and `MEMQL_VERSION_KEEP_MS`: a version is kept while it is
   * among its run's newest count, or younger than the time. Defaults 100 and 86400000 ms.
   */
  readonly versionRetention: { readonly keepCount: number; readonly keepMs: number };
  /** Background processes: `MEMQL_PROCESS_MAX_PER_RUN`, `MEMQL_PROCESS_MAX_LIFETIME_MS`, `MEMQL_PROCESS_SYNC_MS`. */
  readonly processes: ProcessConfig;
  /**
   * `MEMQL_WORKSPACE_MAX_BYTES` and `MEMQL_WORKSPACE_MAX_FILES`: what one workspace may
   * hold. Defaults 4 GiB and 250000 files.
   */
  readonly workspaceQuota: { readonly maxBytes: number; readonly maxFiles: number };
  /** Command queue settings. */
  readonly queue: QueueConfig;
  /** `exec` limits. */
  readonly exec: ExecConfig;
  /** `fetch` limits. */
  readonly fetch: FetchConfig;
  /** Egress: the ceiling of every run's network and the operator's secrets. */
  readonly egress: EgressConfig;
  /** Listen addresses. */
  readonly listen: ListenConfig;
  /** Peer authentication. */
  readonly mesh: MeshConfig;
  /**
   * The worker host's settings; `null` on every other node, which does not read them
   * (see `LoadConfigOptions.worker`), and when one of the three required is missing.
   */
  readonly worker: WorkerConfig | null;
  /** `MEMQL_*` names in the environment that no setting reads (likely typos), sorted. Log them. */
  readonly unknownVariables: string[];
  /** Non-fatal oddities (unknown names with a suggestion, a shadowed alias). Log them. */
  readonly warnings: ConfigWarning[];
}

/** Background process settings. */
export interface ProcessConfig {
  /** `MEMQL_PROCESS_MAX_PER_RUN`: most running at once per run. Default 8. */
  readonly maxPerRun: number;
  /** `MEMQL_PROCESS_MAX_LIFETIME_MS`: longest one runs. Default 86400000 ms. */
  readonly maxLifetimeMs: number;
  /** `MEMQL_PROCESS_SYNC_MS`: period of the sync of their files. Default 5000 ms. */
  readonly syncMs: number;
}
