/**
 * `npm start`: an agent node and a workbench node in one process on the embedded
 * defaults (PGlite and a filesystem object store under a data directory), serving
 * the HTTP API and the operator console on `MEMQL_HTTP_LISTEN`, with two development
 * tokens for user `dev` kept in the data directory: a person token (the console link
 * and the CLI line it prints: the user's own, the one that decides consent) and an
 * agent token (for tool loops, MCP and `memql worker`). Wiring only: load config,
 * build the parts, wait for a signal, stop.
 */

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAgentNode } from '../../src/agent/index.js';
import {
  ensureDevToken,
  ensureOperatorToken,
  ensurePersonToken,
  startApiServer,
} from '../../src/api/index.js';
import { packageVersion } from '../../src/mesh/index.js';
import { createObjectStore, objectStoreSettings } from '../../src/objects/index.js';
import { openDb, pgliteTemplatePath } from '../../src/store/index.js';
import { startMetricsServer } from '../../src/telemetry/index.js';
import { bootNode, exitWhenStopped, listenOn, localNodeId } from '../node-boot.js';
import {
  affinityReader,
  buildNodeHost,
  inProcessFleet,
  reachableWorkbenchRoot,
  startFailureText,
} from '../server-boot.js';

/** The compiled tree this file runs from (`dist/`). */
const DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

async function main(): Promise<void> {
  // Everything of this node lives under its data directory: the database, the objects,
  // the warm workspaces and its node id.
  const dataDir = resolve(process.cwd(), process.env.MEMQL_DATA_DIR || '.data');
  const nodeId = process.env.MEMQL_NODE_ID || localNodeId(dataDir);
  const workbenches = reachableWorkbenchRoot(join(dataDir, 'workbenches'), nodeId);
  const { config, log } = bootNode('local', {
    defaults: {
      MEMQL_DATA_DIR: dataDir,
      MEMQL_WORKBENCH_ROOT: workbenches.root,
      MEMQL_NODE_ID: nodeId,
    },
  });
  if (workbenches.reason && config.workbenchRoot === workbenches.root) {
    log.warn(
      { workbenchRoot: workbenches.root, reason: workbenches.reason },
      'workspaces kept in the temp folder',
    );
  }

  // A new data directory starts from the migrated cluster `npm start`'s build made
  // (scripts/build-if-changed.mjs), not from initdb.
  const db = await openDb(
    config.database.kind === 'pglite'
      ? { ...config.database, template: await pgliteTemplatePath(DIST) }
      : config.database,
  );
  const objects = createObjectStore(objectStoreSettings(config.objectStore));
  await objects.list('', { limit: 1 });
  log.info(
    { database: db.kind, objectStore: config.objectStore.kind, dataDir: config.dataDir },
    'store ready',
  );
  const { host, runner } = await buildNodeHost(config, { db, objects, log });
  const sandbox = 'runner' in runner ? runner.runner.kind : runner.error.message;
  host.start();
  // The agent half, started as an agent node is, but not remote: one process, so every
  // call runs on the in-process workbench. Worker hosts (`memql worker` on this
  // machine or another) can connect only when MEMQL_GRPC_LISTEN is set: otherwise
  // there is no gRPC server, and calls the workbench cannot serve keep their
  // environment_mismatch.
  const takeWorkers = process.env.MEMQL_GRPC_LISTEN !== undefined;
  const agent = await startAgentNode({
    config: { ...config, workbenchRemote: false, workbenchLocalFallback: false },
    log,
    local: host,
    readAffinity: affinityReader(db),
    version: packageVersion(),
    serveGrpc: takeWorkers,
    ...(takeWorkers ? { db } : {}),
  });
  const api = await listenOn('MEMQL_HTTP_LISTEN', config.listen.http, () =>
    startApiServer(
      {
        db,
        objects,
        dispatcher: agent.dispatcher,
        fleet: inProcessFleet(config, host, db),
        workbenchRoot: config.workbenchRoot,
        releaseRun: (runId) => agent.releaseRun(runId),
        egress: config.egress,
        onRunNetworkChanged: (runId, policy) => host.networkChanged(runId, policy),
        metrics: host.queue.metrics.registry,
        cancelCommand: (commandId) => host.queue.cancel(commandId),
        ...(agent.openPort ? { openPort: agent.openPort } : {}),
        ...(agent.workerDirectory ? { workers: agent.workerDirectory } : {}),
        ...(agent.workerCalls ? { workerCalls: agent.workerCalls } : {}),
        log,
      },
      config.listen.http,
    ),
  );
  const dev = await ensureDevToken(db, config.dataDir);
  const person = await ensurePersonToken(db, config.dataDir);
  const operatorFile = await ensureOperatorToken(db, config.dataDir);
  log.info({ url: api.url }, 'API served');
  const metrics = config.listen.metrics
    ? await listenOn('MEMQL_METRICS_LISTEN', config.listen.metrics, () =>
        startMetricsServer(host.queue.metrics.registry, config.listen.metrics!),
      )
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
      `  sign in:        ${api.url}/console#token=${person.token}`,
      `                  (opens the console as you, user "${person.userId}", with your person token)`,
      `  your CLI:       export MEMQL_URL=${api.url} MEMQL_TOKEN=${person.token}`,
      `                  (the person token, kept in ${person.file}, mode 0600: only it approves`,
      '                  consent, raises a scope or turns the kill switch off; keep it out of tool loops)',
      ...(agent.grpcAddress
        ? [
            `  worker hosts:   MEMQL_WORKER_AGENT=${agent.grpcAddress.host}:${agent.grpcAddress.port} MEMQL_WORKER_TOKEN=${dev.token} MEMQL_WORKER_ROOT=$PWD memql worker`,
            '                  (on the machine whose display, GPU or files a call needs; it serves the',
            '                  folder it runs in: MEMQL_WORKER_ROOT names another; docs/workers.md)',
          ]
        : []),
      `  token:          ${dev.token}`,
      `                  (agent token of user "${dev.userId}", for tool loops, MCP and memql worker;`,
      `                  kept in ${dev.file}, mode 0600)`,
      `  operator:       ${operatorFile} (mode 0600): makes other users' tokens,`,
      `                  MEMQL_TOKEN=$(cat ${operatorFile}) memql tokens create <userId>`,
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
  await agent.close();
  await host.stop();
  await metrics?.close();
  await db.close();
  log.flush();
  exitWhenStopped(log);
}

main().catch((err: unknown) => {
  // A refusal that says what to do is printed as it is; anything else with its stack.
  process.stderr.write(`memql local node failed: ${startFailureText(err)}\n`);
  process.exit(1);
});
