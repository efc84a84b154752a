/**
 * Boot steps every node binary shares: the configuration read once from the process
 * environment (a bad value stops the node with exit code 2 and a message naming the
 * variable), the root logger, and the workbench host with a Docker client when the
 * operator chose the docker runner.
 */
import { hostname } from 'node:os';
import Dockerode from 'dockerode';
import {
  type Config,
  ConfigError,
  type LoadConfigOptions,
  loadConfig,
  redactConfig,
} from '../src/config/index.js';
import type { ObjectStore } from '../src/objects/index.js';
import type { Db } from '../src/store/index.js';
import { createLogger, type Logger } from '../src/telemetry/logger.js';
import { type BuiltHost, createWorkbenchHost } from '../src/workbench/host-factory.js';

/** Loads the configuration and makes the root logger, or exits 2 on a bad variable. */
export function bootNode(
  nodeType: 'agent' | 'workbench' | 'local',
  options: Pick<LoadConfigOptions, 'defaults'> & {
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
    });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger({
    nodeId: config.nodeId,
    nodeType,
    level: options.silent ? 'silent' : config.logLevel,
  });
  for (const w of config.warnings) log.warn({ variable: w.variable }, w.message);
  log.info({ config: redactConfig(config) }, 'configuration loaded');
  return { config, log };
}

/** Builds this process's workbench host from the configuration. */
export function buildNodeHost(
  config: Config,
  deps: { db: Db; log: Logger; objects?: ObjectStore },
): Promise<BuiltHost> {
  return createWorkbenchHost(config, {
    ...deps,
    platform: process.platform,
    runsAsRoot: process.getuid?.() === 0,
    ...(config.runner.kind === 'docker'
      ? { docker: new Dockerode({ socketPath: '/var/run/docker.sock' }) }
      : {}),
  });
}
