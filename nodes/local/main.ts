/**
 * `npm start`: an agent node and a workbench node in one process on the embedded
 * defaults (PGlite and a filesystem object store under a data directory), serving
 * the HTTP API and the operator console on `MEMQL_HTTP_LISTEN`, with a development
 * token for user `dev` kept in the data directory. Wiring only: load config, build
 * the parts, wait for a signal, stop.
 */

import { resolve } from 'node:path';
import { AgentDispatcher } from '../../src/agent/index.js';
import { ensureDevToken, localFleet, startApiServer } from '../../src/api/index.js';
import { createObjectStore, objectStoreSettings } from '../../src/objects/index.js';
import { countLiveCommands, getLiveWorkspace, openDb } from '../../src/store/index.js';
import { startMetricsServer } from '../../src/telemetry/metrics.js';
import { bootNode, buildNodeHost, reachableWorkbenchRoot } from '../node-boot.js';

async function main(): Promise<void> {
  const cwd = process.cwd();
  const workbenches = reachableWorkbenchRoot(resolve(cwd, '.data/workbenches'));
  const { config, log } = bootNode('local', {
    defaults: {
      MEMQL_DATA_DIR: resolve(cwd, '.data'),
      MEMQL_WORKBENCH_ROOT: workbenches.root,
    },
  });
  if (workbenches.reason && config.workbenchRoot === workbenches.root) {
    log.warn(
      { workbenchRoot: workbenches.root, reason: workbenches.reason },
      'workspaces kept in the temp folder',
    );
  }

  const db = await openDb(config.database);
  const objects = createObjectStore(objectStoreSettings(config.objectStore));
  await objects.list('', { limit: 1 });
  log.info(
    { database: db.kind, objectStore: config.objectStore.kind, dataDir: config.dataDir },
    'store ready',
  );
  const { host, runner } = await buildNodeHost(config, { db, objects, log });
  const sandbox = 'runner' in runner ? runner.runner.kind : runner.error.message;
  host.start();
  const startedAt = new Date();
  // The agent half: not remote, so every call runs on the in-process workbench.
  const dispatcher = new AgentDispatcher({
    remote: false,
    localFallback: false,
    local: host,
    router: null,
    readAffinity: async (runId) => (await getLiveWorkspace(db, runId))?.nodeId ?? null,
    peersRaw: config.workerPeersRaw,
    workbenchOs: 'linux',
    log,
  });
  const api = await startApiServer(
    {
      db,
      objects,
      dispatcher,
      fleet: localFleet({
        nodeId: config.nodeId,
        capacity: config.queue.concurrency,
        since: startedAt,
        healthy: () => host.queue.lifecycle === 'running',
        running: () => host.queue.runningHere().length,
        queued: async () => (await countLiveCommands(db)).queued,
      }),
      workbenchRoot: config.workbenchRoot,
      metrics: host.queue.metrics.registry,
      log,
    },
    config.listen.http,
  );
  const dev = await ensureDevToken(db, config.dataDir);
  log.info({ url: api.url }, 'API served');
  const metrics = config.listen.metrics
    ? await startMetricsServer(host.queue.metrics.registry, config.listen.metrics)
    : null;
  if (metrics) log.info({ url: metrics.url }, 'metrics served');
  process.stdout.write(
    [
      'memql-workbench local node',
      `  data directory: ${config.dataDir}`,
      `  database:       ${db.kind === 'pglite' ? 'embedded PGlite' : 'PostgreSQL'} (migrated)`,
      `  object store:   ${config.objectStore.kind}`,
      `  workspaces:     ${config.workbenchRoot}`,
      `  sandbox:        ${sandbox}`,
      `  API:            ${api.url}/v1`,
      `  console:        ${api.url}/console`,
      `  token:          ${dev.token}`,
      `                  (user "${dev.userId}"; kept in ${dev.file}, mode 0600)`,
      'ready. Ctrl-C stops.',
      '',
    ].join('\n'),
  );

  await new Promise<void>((done) => {
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
  log.info('stopping');
  await api.close();
  await host.stop();
  await metrics?.close();
  await db.close();
  log.flush();
}

main().catch((err: unknown) => {
  process.stderr.write(`memql local node failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
