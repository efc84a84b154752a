/**
 * The agent node: routes `workbenchHost` calls to workbench replicas over the mesh
 * (`MEMQL_WORKBENCH_REMOTE=1`, peers from `MEMQL_WORKER_PEERS`) or to an in-process
 * workbench, and serves `grpc.health.v1` on `MEMQL_GRPC_LISTEN`. Tool loops reach
 * `dispatchHost` through the library (`src/agent/`) until the HTTP API lands.
 * Wiring only: load config, build the parts, stop on SIGTERM or SIGINT.
 */
import { hostname } from 'node:os';
import Dockerode from 'dockerode';
import { startAgentNode } from '../../src/agent/agent-node.js';
import { type Config, ConfigError, loadConfig, redactConfig } from '../../src/config/index.js';
import { packageVersion } from '../../src/mesh/proto.js';
import { getLiveWorkspace, openDb } from '../../src/store/index.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { createWorkbenchHost } from '../../src/workbench/host-factory.js';

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(process.env, { hostname: hostname(), cwd: process.cwd() });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger({ nodeId: config.nodeId, nodeType: 'agent', level: config.logLevel });
  for (const w of config.warnings) log.warn({ variable: w.variable }, w.message);
  log.info({ config: redactConfig(config) }, 'configuration loaded');

  const db = await openDb(config.database);
  const needsLocal = !config.workbenchRemote || config.workbenchLocalFallback;
  const local = needsLocal
    ? (
        await createWorkbenchHost(config, {
          db,
          log,
          platform: process.platform,
          runsAsRoot: process.getuid?.() === 0,
          ...(config.runner.kind === 'docker'
            ? { docker: new Dockerode({ socketPath: '/var/run/docker.sock' }) }
            : {}),
        })
      ).host
    : null;
  local?.start();
  const node = await startAgentNode({
    config,
    log,
    local,
    readAffinity: async (runId) => (await getLiveWorkspace(db, runId))?.nodeId ?? null,
    version: packageVersion(),
  });
  log.info(
    {
      grpcPort: node.grpcAddress.port,
      grpcHost: node.grpcAddress.host,
      remote: config.workbenchRemote,
      localFallback: config.workbenchLocalFallback,
      peers: node.registry?.views().length ?? 0,
    },
    'agent node ready',
  );

  const signal = await new Promise<string>((done) => {
    process.once('SIGINT', () => done('SIGINT'));
    process.once('SIGTERM', () => done('SIGTERM'));
  });
  log.info({ signal }, 'stopping');
  await node.close();
  await local?.stop();
  await db.close();
  log.flush();
}

main().catch((err: unknown) => {
  process.stderr.write(`memql agent node failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
