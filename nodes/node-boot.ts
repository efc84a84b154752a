/**
 * Boot steps every node binary shares, the worker host's too: the configuration read
 * once from the process environment (a bad value stops the node with exit code 2 and
 * a message naming the variable), the root logger, the kept node ids, the stop signal
 * grace, the listen refusal and the mesh exposure check of a node that serves the mesh.
 * What only the nodes that hold a store or a workbench host share is in
 * `server-boot.ts`, so the worker host's binary imports neither.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import {
  type Config,
  ConfigError,
  configLogView,
  type LoadConfigOptions,
  loadConfig,
  meshExposure,
} from '../src/config/index.js';
import { createLogger, type Logger } from '../src/telemetry/index.js';

/** How long a stopped node waits for its event loop to empty before it exits anyway, ms. */
export const EXIT_AFTER_STOP_MS = 2_000;

/**
 * Called once a node has stopped everything it owns (calls answered, workspaces handed
 * off, servers and the database pool closed): the process ends as soon as nothing is
 * left open, or after {@link EXIT_AFTER_STOP_MS} with exit code 0, naming what a
 * library still held. One known case: postgres.js arms a reconnect timer when its
 * connection drops (a database outage) and `end()` does not clear it, so the timer can
 * open a new connection after the pool ended, which would keep a stopped node up.
 */
export function exitWhenStopped(log: Logger, afterMs = EXIT_AFTER_STOP_MS): void {
  setTimeout(() => {
    log.warn(
      { resources: process.getActiveResourcesInfo() },
      'stopped, but handles are still open: exiting',
    );
    log.flush();
    process.exit(0);
  }, afterMs).unref();
}

/**
 * `--shutdown-grace-ms=<ms>` from a node's arguments, else `defaultMs`: how long calls
 * in flight get after a stop signal. A bad value exits 2 saying so.
 */
export function shutdownGraceMs(argv: readonly string[], defaultMs: number): number {
  const flag = argv.find((a) => a.startsWith('--shutdown-grace-ms='));
  if (flag === undefined) return defaultMs;
  const value = Number(flag.slice('--shutdown-grace-ms='.length));
  if (!Number.isSafeInteger(value) || value < 0) {
    process.stderr.write(`--shutdown-grace-ms must be a non-negative integer (ms), got ${flag}\n`);
    process.exit(2);
  }
  return value;
}

/** Loads the configuration and makes the root logger, or exits 2 on a bad variable. */
export function bootNode(
  nodeType: 'agent' | 'workbench' | 'local' | 'worker',
  options: Pick<LoadConfigOptions, 'defaults' | 'worker' | 'egressSecretValues'> & {
    /** No log lines (a subcommand whose stdout is its answer). */
    silent?: boolean;
  } = {},
): { config: Config; log: Logger } {
  let config: Config;
  try {
    config = loadConfig(process.env, {
      hostname: hostname(),
      cwd: process.cwd(),
      ...(options.defaults ? { defaults: options.defaults } : {}),
      ...(options.worker ? { worker: true } : {}),
      ...(options.egressSecretValues === undefined
        ? {}
        : { egressSecretValues: options.egressSecretValues }),
      // The files MEMQL_EGRESS_SECRETS names (mounted Secrets), read once at start.
      readFile: (path) => readFileSync(path, 'utf8'),
    });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const pretty =
    config.logFormat === 'pretty' || (config.logFormat === 'auto' && process.stdout.isTTY === true);
  const log = createLogger({
    nodeId: config.nodeId,
    nodeType,
    level: options.silent ? 'silent' : config.logLevel,
    format: pretty ? 'pretty' : 'json',
  });
  for (const w of config.warnings) log.warn({ variable: w.variable }, w.message);
  log.info({ config: configLogView(config) }, 'configuration loaded');
  return { config, log };
}

/**
 * The local node's id: `local-<12 hex>`, made once per data directory and kept in
 * `<dataDir>/node-id`, so it is the same across restarts of one data directory and
 * differs between two (two local nodes never take each other's workspace rows or warm
 * folders for their own).
 */
export function localNodeId(dataDir: string): string {
  return keptNodeId(dataDir, 'local', 'node-id');
}

/**
 * A worker host's id: `worker-<12 hex>`, kept in `<dataDir>/worker-id` as the local
 * node keeps its own (a file of its own, so a data directory both use keeps both), so the agent (and the user's consent, which names the worker) knows the same
 * machine across restarts. When the data directory cannot be written, the host name
 * stands in: stable too, though two workers on one machine then share it.
 */
export function workerNodeId(dataDir: string, host: string): string {
  try {
    return keptNodeId(dataDir, 'worker', 'worker-id');
  } catch {
    const name = host.replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 100) || 'host';
    return `worker-${name}`;
  }
}

/** `<prefix>-<12 hex>`, made once per data directory and kept in `<dataDir>/<fileName>`. */
function keptNodeId(dataDir: string, prefix: 'local' | 'worker', fileName: string): string {
  const file = join(dataDir, fileName);
  try {
    const kept = readFileSync(file, 'utf8').trim();
    if (new RegExp(`^${prefix}-[0-9a-f]{12}$`).test(kept)) return kept;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const made = `${prefix}-${randomBytes(6).toString('hex')}`;
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, `${made}\n`, { mode: 0o644 });
  return made;
}

/**
 * Stops a node that would serve `NodeService.Stream` on a non-loopback address with
 * neither a mesh token nor mutual TLS (exit code 2, a message naming the variables and
 * what to do), and warns at every start when `MEMQL_MESH_INSECURE` lets it. Only the
 * workbench node calls it: the agent node's gRPC server carries `grpc.health.v1` alone,
 * which answers without a token anyway, and the local node serves no gRPC.
 */
export function refuseExposedMesh(config: Config, log: Logger): void {
  const exposure = meshExposure(config);
  if (exposure.kind === 'refused') {
    process.stderr.write(`${exposure.message}\n`);
    process.exit(2);
  }
  if (exposure.kind === 'insecure') {
    log.warn({ variable: 'MEMQL_MESH_INSECURE', grpcListen: config.listen.grpc }, exposure.warning);
  }
}

/** A node could not listen where its settings said: one line, naming the setting. */
export class ListenRefusedError extends Error {
  override readonly name = 'ListenRefusedError';
}

/**
 * Starts a listener, turning the OS's refusal of its address into a
 * {@link ListenRefusedError} that names `setting` and says what to do.
 */
export async function listenOn<T>(
  setting: string,
  address: { host: string; port: number },
  start: () => Promise<T>,
): Promise<T> {
  try {
    return await start();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const at = `${address.host}:${address.port}`;
    const why =
      code === 'EADDRINUSE'
        ? `${at} is in use by another process (another node, a second npm start?)`
        : code === 'EACCES'
          ? `this user may not listen on ${at} (ports below 1024 need root)`
          : code === 'EADDRNOTAVAIL'
            ? `${address.host} is not an address of this machine`
            : null;
    if (why === null) throw err;
    throw new ListenRefusedError(
      `${setting}=${at}: ${why}; stop that process, or set ${setting} to another address, such as ${address.host}:${address.port + 1} (port 0 picks a free one)`,
    );
  }
}
