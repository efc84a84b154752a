/**
 * One environment variable the configuration reads. {@link CONFIG_VARIABLES}
 * is the single source of names, defaults and documentation: the loader takes
 * defaults from it and the table of docs/configuration.md is rendered from it.
 */
export interface ConfigVariable {
  /** The variable's name, e.g. `MEMQL_COMMAND_CONCURRENCY`. */
  readonly name: string;
  /**
   * The default, as text, parsed exactly like a value from the environment.
   * `undefined` when the variable has no fixed default (it is optional, or its
   * default is derived; then {@link defaultText} explains).
   */
  readonly default: string | undefined;
  /** How the default reads in documentation when it is not a fixed string. */
  readonly defaultText?: string;
  /** The accepted form and unit, e.g. `positive integer (ms)`. */
  readonly type: string;
  /** What the setting does, for operators. */
  readonly description: string;
  /** The value is a credential: never shown in errors, and redacted when config is logged. */
  readonly secret?: boolean;
  /** Older names also accepted; this name wins when both are set. */
  readonly aliases?: readonly string[];
}

/**
 * Every variable the configuration reads, in the order the table lists them.
 * Empty values count as unset everywhere, so `FOO=` in a manifest means "default".
 */
export const CONFIG_VARIABLES = [
  {
    name: 'MEMQL_NODE_ID',
    default: 'local',
    defaultText: 'the host name the binary passes in, else `local`',
    type: 'node id (letters, digits, `.`, `_`, `-`; at most 128)',
    description:
      "This node's id in the mesh. Stamped on the workspace rows it owns, so it must be stable across restarts of the same replica (a StatefulSet pod name is).",
  },
  {
    name: 'MEMQL_LOG_LEVEL',
    default: 'info',
    type: 'fatal, error, warn, info, debug, trace or silent',
    description: 'Minimum level of structured (pino) log lines.',
  },
  {
    name: 'MEMQL_LOG_FORMAT',
    default: 'auto',
    type: '`auto`, `json` or `pretty`',
    description:
      'How log lines are written: `json` (one JSON object a line, for collectors), `pretty` (a short line a record, for people), or `auto`: `pretty` when standard output is a terminal, else `json`.',
  },
  {
    name: 'MEMQL_WORKBENCH_ROOT',
    default: '/var/lib/memql/workbenches',
    type: 'absolute path',
    description: 'Directory holding one workspace directory per run, `<root>/<runId>/`.',
  },
  {
    name: 'MEMQL_DATA_DIR',
    default: '/var/lib/memql/data',
    type: 'path (relative resolves against the working directory the binary passes)',
    description:
      'Home of the embedded defaults: the PGlite database (`<dir>/pglite`) and filesystem objects (`<dir>/objects`). The local binary defaults it to `./.data`.',
  },
  {
    name: 'MEMQL_DATABASE_URL',
    default: undefined,
    defaultText: 'unset: embedded PGlite in `<MEMQL_DATA_DIR>/pglite`',
    type: '`postgres://` or `postgresql://` URL',
    description:
      'Postgres server for all rows. Its password is redacted whenever config is logged or quoted in an error.',
  },
  {
    name: 'MEMQL_OBJECT_STORE',
    default: 'fs',
    type: '`fs` or `s3`',
    description: 'Where file bytes are kept durably.',
  },
  {
    name: 'MEMQL_OBJECT_STORE_DIR',
    default: undefined,
    defaultText: '`<MEMQL_DATA_DIR>/objects`',
    type: 'path',
    description: 'Base directory of the `fs` object store. Setting it with `s3` is an error.',
  },
  {
    name: 'MEMQL_S3_BUCKET',
    default: undefined,
    defaultText: 'unset (required with `s3`)',
    type: 'bucket name, 3 to 63 characters',
    description: 'Bucket of the `s3` object store. Any `MEMQL_S3_*` set with `fs` is an error.',
  },
  {
    name: 'MEMQL_S3_ENDPOINT',
    default: undefined,
    defaultText: 'unset: AWS',
    type: '`http://` or `https://` URL',
    description: 'Endpoint of an S3-compatible server such as MinIO.',
  },
  {
    name: 'MEMQL_S3_REGION',
    default: 'us-east-1',
    type: 'region name',
    description: 'Region used to sign S3 requests.',
  },
  {
    name: 'MEMQL_S3_PREFIX',
    default: '',
    defaultText: 'empty',
    type: 'key prefix; a trailing `/` is added',
    description: 'Prefix of every object key, to share a bucket.',
  },
  {
    name: 'MEMQL_S3_FORCE_PATH_STYLE',
    default: 'false',
    type: 'boolean',
    description:
      'Address the bucket in the path rather than the host name (most S3-compatible servers need it).',
  },
  {
    name: 'MEMQL_S3_ACCESS_KEY_ID',
    default: undefined,
    defaultText: 'unset: the SDK credential chain',
    type: 'string',
    description: 'S3 access key id; set together with `MEMQL_S3_SECRET_ACCESS_KEY` or not at all.',
  },
  {
    name: 'MEMQL_S3_SECRET_ACCESS_KEY',
    default: undefined,
    defaultText: 'unset: the SDK credential chain',
    type: 'string',
    description: 'S3 secret access key; set together with `MEMQL_S3_ACCESS_KEY_ID` or not at all.',
    secret: true,
  },
  {
    name: 'MEMQL_RUNNER',
    default: undefined,
    defaultText: 'unset: auto (bwrap on Linux when available, else commands are refused)',
    type: '`bwrap`, `docker`, `process` or `auto`',
    description:
      'Sandbox backend for `exec`. `process` gives no isolation and is only used when named here; `bwrap` requires Linux.',
  },
  {
    name: 'MEMQL_RUNNER_IMAGE',
    default: 'memql/runner:latest',
    type: 'container image reference',
    description:
      'Image the `docker` runner starts commands in: the `runner` target of `deploy/Dockerfile`.',
    aliases: ['EXECUTION_WORKSPACE_RUNNER_IMAGE'],
  },
  {
    name: 'MEMQL_WORKBENCH_REMOTE',
    default: 'false',
    type: 'boolean',
    description:
      'Agent nodes send workbench calls to a workbench peer; with no healthy peer a call is refused (`no_workbench_peer`), never run locally. Requires a `workbench=` seed in `MEMQL_WORKER_PEERS`.',
  },
  {
    name: 'MEMQL_WORKBENCH_LOCAL_FALLBACK',
    default: 'false',
    type: 'boolean',
    description:
      'With `MEMQL_WORKBENCH_REMOTE`, run a call in-process when no workbench peer is healthy. For development.',
  },
  {
    name: 'MEMQL_WORKER_PEERS',
    default: '',
    defaultText: 'empty',
    type: 'comma-separated `type=host:port`; IPv6 in brackets',
    description:
      'Seeds the agent node dials, e.g. `workbench=workbench:50060`. Each host resolves to all its addresses. A malformed entry fails startup; no seed is ever dropped.',
  },
  {
    name: 'MEMQL_COMMAND_CONCURRENCY',
    aliases: ['MEMQL_WORKER_CONCURRENCY'],
    default: '4',
    type: 'positive integer (commands)',
    description:
      'Commands this node runs at once; the rest wait in the queue. `MEMQL_WORKER_CONCURRENCY`, its old name, is still read, with a warning: "worker" names the worker hosts.',
  },
  {
    name: 'MEMQL_COMMAND_LEASE_MS',
    default: '30000',
    type: 'positive integer (ms)',
    description:
      'Lease of a running command; its worker heartbeats well within it, and an expired lease is recovered.',
  },
  {
    name: 'MEMQL_NODE_LIVENESS_MS',
    default: '10000',
    type: 'positive integer (ms)',
    description:
      'How long a workbench node may stay silent before the others count it gone: they then take its workspaces over (fenced) and end its running commands as `command_lost`. Nodes heartbeat five times per window.',
  },
  {
    name: 'MEMQL_HANDOFF_WAIT_MS',
    default: '30000',
    type: 'positive integer (ms)',
    description:
      'How long a call for a workspace held by a draining node waits for that node to hand it off before answering `unavailable`.',
  },
  {
    name: 'MEMQL_QUEUE_POLL_INTERVAL_MS',
    default: '1000',
    type: 'positive integer (ms)',
    description:
      'How often an idle worker polls the queue, and how often a node reads the rows of the commands its callers wait for; the backstop to wake-ups (in-process, and `NOTIFY` from other nodes on Postgres).',
  },
  {
    name: 'MEMQL_HYDRATED_IDLE_TTL_MS',
    default: '900000',
    type: 'non-negative integer (ms)',
    description:
      'How long a hydrated workspace stays warm for reuse after its last command; `0` disables reuse.',
  },
  {
    name: 'MEMQL_WORKSPACE_MAX_BYTES',
    default: '4294967296',
    type: 'positive integer (bytes)',
    description:
      'Most bytes the files of one workspace may hold (4 GiB). A write or command that would go over is refused or stopped (`workspace_quota_exceeded`) and nothing of it is kept.',
  },
  {
    name: 'MEMQL_WORKSPACE_MAX_FILES',
    default: '250000',
    type: 'positive integer (files)',
    description:
      'Most files one workspace may hold. A write or command that would go over is refused or stopped (`workspace_quota_exceeded`) and nothing of it is kept.',
  },
  {
    name: 'MEMQL_CLEANUP_INTERVAL_MS',
    default: '300000',
    type: 'positive integer (ms)',
    description:
      'Period of the sweeper that removes workspaces of deleted or expired runs and unclaimed directories.',
  },
  {
    name: 'MEMQL_UPLOAD_IDLE_MS',
    default: '3600000',
    type: 'positive integer (ms)',
    description:
      "How long the staged bytes of an upload (`fs_write` in parts, `PUT /v1/runs/:runId/files`) are kept with no new part before the sweeper removes them. Staged bytes count against the workspace's `MEMQL_WORKSPACE_MAX_BYTES`, and go as soon as the upload completes, is refused or aborted, its run ends or is deleted, or the node restarts.",
  },
  {
    name: 'MEMQL_VERSION_KEEP_COUNT',
    default: '100',
    type: 'non-negative integer',
    description:
      "A run's newest versions that are kept whatever their age (`version_list`, `version_restore`); older ones go once they are also older than `MEMQL_VERSION_KEEP_MS`. Labelled versions (`version_checkpoint`) and the current one are always kept; blobs only removed versions needed are deleted.",
  },
  {
    name: 'MEMQL_VERSION_KEEP_MS',
    default: '86400000',
    type: 'non-negative integer (ms)',
    description:
      'How long a version is kept whatever the count: one older than this and not among the newest `MEMQL_VERSION_KEEP_COUNT` is removed by the sweeper.',
  },
  {
    name: 'MEMQL_PROCESS_MAX_PER_RUN',
    default: '8',
    type: 'positive integer',
    description:
      'Most background processes (`process_start`) one run may have running at once; one more is refused `process_limit` until one ends.',
  },
  {
    name: 'MEMQL_PROCESS_MAX_LIFETIME_MS',
    default: '86400000',
    type: 'positive integer (ms)',
    description:
      'Longest a background process may run: past it the node ends it (`killed`, `SIGKILL`). Ending the run ends its processes sooner.',
  },
  {
    name: 'MEMQL_PROCESS_SYNC_MS',
    default: '5000',
    type: 'positive integer (ms)',
    description:
      "How often the files a run's background processes write are synced to durable storage while one runs (and once more when each ends): what a lost replica's processes wrote since is not kept.",
  },
  {
    name: 'MEMQL_EXEC_TIMEOUT_MS',
    default: '120000',
    type: 'positive integer (ms)',
    description: 'Timeout of an `exec` that names none. At most `MEMQL_EXEC_MAX_TIMEOUT_MS`.',
  },
  {
    name: 'MEMQL_EXEC_MAX_TIMEOUT_MS',
    default: '3600000',
    type: 'positive integer (ms)',
    description: 'Largest timeout an `exec` may ask for.',
  },
  {
    name: 'MEMQL_EXEC_OUTPUT_LIMIT_BYTES',
    default: '1048576',
    type: 'positive integer (bytes, per stream)',
    description: 'Output kept from each of stdout and stderr of one command; the rest is cut.',
  },
  {
    name: 'MEMQL_EXEC_MEMORY_LIMIT_BYTES',
    default: '1073741824',
    type: 'positive integer (bytes)',
    description: "Memory limit of one command's sandbox.",
  },
  {
    name: 'MEMQL_EXEC_PIDS_LIMIT',
    default: '256',
    type: 'positive integer (processes)',
    description: "Process limit of one command's sandbox.",
  },
  {
    name: 'MEMQL_EXEC_CPU_LIMIT',
    default: '1',
    type: 'decimal from 0.01 to 1024 (CPUs)',
    description:
      "CPU limit of one command's sandbox, all its processes together: `0.5` is half of one CPU's time, `2` two CPUs'. The `bwrap` runner sets a CFS quota (cgroup v1 `cpu`); the `docker` runner sets `NanoCpus`, which Docker refuses above the CPUs of its host.",
  },
  {
    name: 'MEMQL_SANDBOX_IDLE_MS',
    default: '30000',
    type: 'non-negative integer (ms)',
    description:
      "How long the `bwrap` runner keeps a run's sandbox warm after a command, for the run's next command to start in it instead of a new sandbox (its agent needs `/usr/bin/perl`). Each command still gets a clean environment, fresh pipes, an empty `/tmp` and `/dev/shm`, and nothing an earlier command started; a file changed by anything but a command, a time limit or a cancel ends the warm sandbox. `0`: every command starts a sandbox of its own.",
  },
  {
    name: 'MEMQL_EXEC_ALLOWLIST_EXTRA',
    default: '',
    defaultText: 'empty',
    type: 'comma-separated command names',
    description: 'Commands allowed in `exec` beyond the built-in allowlist.',
  },
  {
    name: 'MEMQL_FETCH_ALLOW_PRIVATE',
    default: '',
    defaultText: 'empty: no private ranges',
    type: 'comma-separated CIDRs (IPv4 or IPv6)',
    description:
      'Private address ranges `fetch` and the egress proxy (commands with network) may reach, e.g. `127.0.0.0/8`; all others stay blocked, and cloud metadata always. Each entry is `address/prefix` with the prefix required (host bits are ignored), in plain notation: dotted decimal IPv4 without leading zeros, IPv6 without brackets or a zone. A bad entry stops the node at start (exit 2).',
  },
  {
    name: 'MEMQL_FETCH_MAX_BYTES',
    default: '10485760',
    type: 'positive integer (bytes)',
    description: 'Largest response body `fetch` accepts.',
  },
  {
    name: 'MEMQL_FETCH_TIMEOUT_MS',
    default: '30000',
    type: 'positive integer (ms)',
    description: 'Time limit of one `fetch`.',
  },
  {
    name: 'MEMQL_EGRESS_CEILING',
    default: '',
    defaultText: 'empty: no run may have network',
    type: 'comma-separated host rules: `host`, `*.suffix`, either with `:port`',
    description:
      'The most network any run may be given, e.g. `pypi.org,files.pythonhosted.org,registry.npmjs.org,github.com:443`. A run is given hosts within it at creation or later (`network` of `POST /v1/runs`, `PUT /v1/runs/:runId/network`); a host outside it is refused (`egress_not_allowed`). Rules name hosts, never addresses; a wildcard matches the names below its suffix. Set it on agent nodes (which check each change) and on workbench nodes (which enforce it again, so lowering it takes effect without touching the runs).',
  },
  {
    name: 'MEMQL_EGRESS_SECRETS',
    default: undefined,
    defaultText: 'unset: no secrets',
    type: 'JSON object: `{"<name>": {"hosts": [rules], "header": "<name>", "prefix"?: "<text>", "file": "<path>" | "env": "<VARIABLE>"}}`',
    description:
      'Secrets a run may opt into by name (`network.secrets`): the egress proxy adds the header to requests to those hosts only, and the value never enters the sandbox. The value is read at start from `file` (a mounted Kubernetes Secret; one trailing newline is dropped) or from the environment variable `env` (`valueFrom.secretKeyRef`), `prefix` put before it (e.g. `"Bearer "`). Only references belong here, never a value, so it is plain configuration (a ConfigMap value), not a Secret; still, no error quotes it, in case a value was pasted in by mistake. Agent nodes in remote mode read the names only.',
  },
  {
    name: 'MEMQL_EGRESS_RESOLVE',
    default: '',
    defaultText: 'empty: DNS',
    type: 'comma-separated `host=address` (an entry per address)',
    description:
      "Names the egress proxy resolves to the given addresses instead of asking DNS, e.g. a package mirror on the operator's network: `pypi.internal=10.0.0.7`. The addresses are still checked: a private one needs its range in `MEMQL_FETCH_ALLOW_PRIVATE`, and cloud metadata is never reached.",
  },
  {
    name: 'MEMQL_EGRESS_CA_FILE',
    default: '',
    defaultText: 'empty: the system CAs only',
    type: 'path of a PEM file of certificates',
    description:
      "CA certificates commands with network trust beside the system's (the sandbox's trust bundle), and the egress proxy trusts upstream for the hosts it adds a secret for: a private package index's CA, say. Read at start; a file that cannot be read or holds no certificate stops the node (exit 2).",
  },
  {
    name: 'MEMQL_GRPC_LISTEN',
    default: '0.0.0.0:50060',
    type: '`host:port`; IPv6 in brackets; port 0 picks a free port',
    description:
      'Address of the `NodeService` and `grpc.health.v1` server. A workbench node refuses to start (exit 2) on an address other than loopback (127.0.0.0/8, `::1`, `localhost`) unless `MEMQL_MESH_TOKEN` or mutual TLS is configured or `MEMQL_MESH_INSECURE` is set.',
  },
  {
    name: 'MEMQL_HTTP_LISTEN',
    default: '127.0.0.1:8080',
    type: '`host:port`; IPv6 in brackets; port 0 picks a free port',
    description: 'Address of the HTTP API and operator console.',
  },
  {
    name: 'MEMQL_METRICS_LISTEN',
    default: undefined,
    defaultText: 'unset: no metrics server',
    type: '`host:port`; IPv6 in brackets; port 0 picks a free port',
    description: 'Address of the Prometheus metrics endpoint.',
  },
  {
    name: 'MEMQL_MESH_TOKEN',
    default: undefined,
    defaultText: 'unset: peers are not authenticated by token',
    type: 'at least 16 characters, no whitespace',
    description: 'Shared secret nodes present to each other.',
    secret: true,
  },
  {
    name: 'MEMQL_TLS_CERT_FILE',
    default: undefined,
    defaultText: 'unset: no TLS identity',
    type: 'path',
    description:
      'PEM certificate of this node for mesh TLS; set together with `MEMQL_TLS_KEY_FILE`.',
  },
  {
    name: 'MEMQL_TLS_KEY_FILE',
    default: undefined,
    defaultText: 'unset: no TLS identity',
    type: 'path',
    description: 'PEM private key matching `MEMQL_TLS_CERT_FILE`.',
  },
  {
    name: 'MEMQL_TLS_CA_FILE',
    default: undefined,
    defaultText: 'unset: system roots',
    type: 'path',
    description:
      "PEM CA bundle that peers' certificates must chain to. With `MEMQL_TLS_CERT_FILE` and `MEMQL_TLS_KEY_FILE` it makes mutual TLS: a serving node requires and verifies its callers' certificates.",
  },
  {
    name: 'MEMQL_MESH_INSECURE',
    default: 'false',
    type: 'boolean',
    description:
      'Lets a workbench node serve the mesh on a non-loopback `MEMQL_GRPC_LISTEN` with neither `MEMQL_MESH_TOKEN` nor mutual TLS; without it such a node refuses to start. Anyone who can reach the port can then run commands, so use it only on a network where every host is trusted; every start logs a warning.',
  },
  {
    name: 'MEMQL_WORKER_AGENT',
    default: undefined,
    defaultText: 'unset (the worker binary requires it)',
    type: '`host:port`; IPv6 in brackets',
    description:
      "Worker hosts only: the agent node's gRPC address the worker dials out to. Calls come down the worker's own connection, so its machine needs no open port. With `MEMQL_TLS_*` set the worker dials TLS, else plaintext.",
  },
  {
    name: 'MEMQL_WORKER_TOKEN',
    default: undefined,
    defaultText: 'unset (the worker binary requires it)',
    type: 'API token (printable characters, no whitespace)',
    description:
      'Worker hosts only: an API token of the user who owns the worker (`memql tokens create`), sent as `authorization: Bearer <token>`. A token the agent refuses stops the worker (exit 2). No command ever sees it.',
    secret: true,
  },
  {
    name: 'MEMQL_WORKER_ROOT',
    default: undefined,
    defaultText: 'unset (the worker binary requires it)',
    type: 'path (relative resolves against the working directory)',
    description:
      "Worker hosts only: the directory of the user's files the worker serves. Every path of a file action and every command's working directory is relative to it and may not leave it. It must exist and be a directory, or the worker refuses to start (exit 2).",
  },
  {
    name: 'MEMQL_WORKER_PROVIDES',
    default: undefined,
    defaultText:
      'unset: detected (`display` when the X11 or Wayland socket of `DISPLAY` / `WAYLAND_DISPLAY` exists, `gpu` when `/dev/nvidia0` or a `/dev/dri/renderD*` exists, `macos_tooling` on macOS with `/usr/bin/xcrun`, `user_files` always)',
    type: 'comma-separated needs: `display`, `gpu`, `macos_tooling`, `user_files`',
    description:
      'Worker hosts only: what the worker offers, instead of what it detects. A call whose environment hint needs more is refused (`environment_mismatch`).',
  },
  {
    name: 'MEMQL_WORKER_CAPACITY',
    default: '4',
    type: 'positive integer (calls)',
    description: 'Worker hosts only: calls the worker runs at once; more wait for a slot.',
  },
] as const satisfies readonly ConfigVariable[];

/** The name of a variable in {@link CONFIG_VARIABLES}. */
export type ConfigVariableName = (typeof CONFIG_VARIABLES)[number]['name'];

const BY_NAME: ReadonlyMap<string, ConfigVariable> = new Map(
  CONFIG_VARIABLES.map((variable) => [variable.name, variable]),
);

const KNOWN_ALIASES: ReadonlySet<string> = new Set(
  CONFIG_VARIABLES.flatMap((variable: ConfigVariable) => variable.aliases ?? []),
);

/** The entry for `name`. */
export function configVariable(name: ConfigVariableName): ConfigVariable {
  // Every ConfigVariableName is in the map by construction.
  return BY_NAME.get(name)!;
}

/** True when `name` is a variable the configuration reads, or an alias of one. */
export function isKnownVariable(name: string): boolean {
  return BY_NAME.has(name) || KNOWN_ALIASES.has(name);
}
