/**
 * The workbench node: serves `NodeService.Stream` and `grpc.health.v1` on
 * `MEMQL_GRPC_LISTEN`, answering forwarded calls with the workbench host. Wiring
 * only: load config, refuse an unauthenticated non-loopback listen address (exit 2),
 * build the parts, serve, drain and stop on SIGTERM or SIGINT.
 *
 * Flags: `--shutdown-grace-ms=<ms>` (default 25000): how long in-flight calls get to
 * finish after a stop signal before they are aborted.
 */

import { createWorkbenchHandler, MeshServer, packageVersion } from '../../src/mesh/index.js';
import { ABORT_WAIT_MS } from '../../src/queue/index.js';
import { openDb } from '../../src/store/index.js';
import { startMetricsServer } from '../../src/telemetry/index.js';
import {
  bootNode,
  exitWhenStopped,
  listenOn,
  refuseExposedMesh,
  shutdownGraceMs,
} from '../node-boot.js';
import { buildNodeHost, startFailureText } from '../server-boot.js';

const DEFAULT_GRACE_MS = 25_000;
/** How long after the commands' end the calls waiting on them get to answer, ms. */
const CALL_SETTLE_MS = 2_000;

async function main(): Promise<void> {
  const grace = shutdownGraceMs(process.argv.slice(2), DEFAULT_GRACE_MS);
  const { config, log } = bootNode('workbench');
  refuseExposedMesh(config, log);

  const db = await openDb(config.database);
  const { host, runner } = await buildNodeHost(config, { db, log });
  host.start();
  const metrics = config.listen.metrics
    ? await listenOn('MEMQL_METRICS_LISTEN', config.listen.metrics, () =>
        startMetricsServer(host.queue.metrics.registry, config.listen.metrics!),
      )
    : null;
  if (metrics) log.info({ url: metrics.url }, 'metrics served');
  const server = new MeshServer({
    nodeId: config.nodeId,
    nodeType: 'workbench',
    version: packageVersion(),
    token: config.mesh.token,
    tls: config.mesh.tls,
    log,
    handler: createWorkbenchHandler(host, log),
    capacity: config.queue.concurrency,
    toolchain: () => host.toolchain(),
  });
  const address = await server.start(config.listen.grpc);
  // Agents route builds by the toolchain in Health frames: tell them as soon as it is known.
  void host.toolchainSettled().then(() => server.healthChanged());
  if (config.mesh.token === null) {
    log.warn(
      'MEMQL_MESH_TOKEN is unset: streams are not authenticated and system authority is never honoured',
    );
  }
  log.info(
    {
      grpcPort: address.port,
      grpcHost: address.host,
      sandbox: 'runner' in runner ? runner.runner.kind : runner.error.message,
      workbenchRoot: config.workbenchRoot,
    },
    'workbench node ready',
  );

  const signal = await new Promise<string>((done) => {
    process.once('SIGINT', () => done('SIGINT'));
    process.once('SIGTERM', () => done('SIGTERM'));
  });
  log.info({ signal, graceMs: grace }, 'stopping: draining in-flight calls');
  // Draining in the database first, then unhealthy on the mesh: agents route new calls
  // elsewhere, and those calls find this node draining, so they wait for its handoff of
  // the run's workspace instead of taking it over.
  await host.drain();
  const calls = server.drain(grace + ABORT_WAIT_MS + CALL_SETTLE_MS);
  // Commands get the grace to finish; the rest end as `node_stopping`, then every
  // workspace is handed off. Each waiting call answers as its command ends.
  await host.stop(grace);
  const outcome = await calls;
  await server.close();
  await metrics?.close();
  await db.close();
  log.info(outcome, 'stopped');
  log.flush();
  exitWhenStopped(log);
}

main().catch((err: unknown) => {
  // A refusal that says what to do is printed as it is; anything else with its stack.
  process.stderr.write(`memql workbench node failed: ${startFailureText(err)}\n`);
  process.exit(1);
});
