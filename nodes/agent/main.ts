/**
 * The agent node: routes `workbenchHost` calls to workbench replicas over the mesh
 * (`MEMQL_WORKBENCH_REMOTE=1`, peers from `MEMQL_WORKER_PEERS`) or to an in-process
 * workbench, serves the HTTP API and the operator console on `MEMQL_HTTP_LISTEN`,
 * and `grpc.health.v1` on `MEMQL_GRPC_LISTEN`.
 *
 * `node dist/nodes/agent/main.js create-token <userId> [--person]` makes an API token
 * for a user, an agent token or with `--person` the user's own person token (stored
 * hashed; the plaintext is printed once) and exits; `create-operator-token
 * [label]` makes an operator credential the same way, for `/v1/admin` (making and
 * revoking users' tokens through a running node).
 *
 * Wiring only: load config, build the parts, stop on SIGTERM or SIGINT.
 */

import { Registry } from 'prom-client';
import { startAgentNode } from '../../src/agent/index.js';
import { remoteFleet, startApiServer } from '../../src/api/index.js';
import { packageVersion } from '../../src/mesh/index.js';
import { createObjectStore, objectStoreSettings } from '../../src/objects/index.js';
import { createApiToken, createOperatorCredential, openDb } from '../../src/store/index.js';
import { bootNode, exitWhenStopped, listenOn } from '../node-boot.js';
import { affinityReader, buildNodeHost, inProcessFleet, startFailureText } from '../server-boot.js';

async function main(): Promise<void> {
  const createToken = process.argv[2] === 'create-token';
  const createOperator = process.argv[2] === 'create-operator-token';
  const { config, log } = bootNode('agent', {
    silent: createToken || createOperator,
    // A remote agent runs no command: it checks a run's secret names, never sends one.
    egressSecretValues: 'unless-remote',
  });
  if (createOperator) {
    const label = process.argv[3] ?? 'operator';
    const db = await openDb(config.database);
    const made = await createOperatorCredential(db, { label });
    await db.close();
    process.stdout.write(`${made.token}\n`);
    return;
  }
  if (createToken) {
    const userId = process.argv[3] ?? '';
    const flags = process.argv.slice(4);
    if (!/^[\x21-\x7e]{1,200}$/.test(userId) || flags.some((f) => f !== '--person')) {
      process.stderr.write(
        "usage: main.js create-token <userId> [--person] (userId printable, no spaces; --person: the user's own token, which decides consent)\n",
      );
      process.exit(2);
    }
    const kind = flags.includes('--person') ? 'person' : 'agent';
    const db = await openDb(config.database);
    const made = await createApiToken(db, userId, { label: 'create-token', kind });
    await db.close();
    process.stdout.write(`${made.token}\n`);
    return;
  }

  const db = await openDb(config.database);
  const objects = createObjectStore(objectStoreSettings(config.objectStore));
  const needsLocal = !config.workbenchRemote || config.workbenchLocalFallback;
  const local = needsLocal ? (await buildNodeHost(config, { db, objects, log })).host : null;
  local?.start();
  const node = await startAgentNode({
    config,
    log,
    local,
    readAffinity: affinityReader(db),
    version: packageVersion(),
    db,
  });
  const api = await listenOn('MEMQL_HTTP_LISTEN', config.listen.http, () =>
    startApiServer(
      {
        db,
        objects,
        dispatcher: node.dispatcher,
        fleet:
          config.workbenchRemote || local === null
            ? remoteFleet(node.registry)
            : inProcessFleet(config, local, db),
        localFallback: config.workbenchRemote && config.workbenchLocalFallback,
        ...(node.workerDirectory ? { workers: node.workerDirectory } : {}),
        ...(node.workerCalls ? { workerCalls: node.workerCalls } : {}),
        ...(local ? { workbenchRoot: config.workbenchRoot } : {}),
        releaseRun: (runId) => node.releaseRun(runId),
        ...(node.openPort ? { openPort: node.openPort } : {}),
        egress: config.egress,
        ...(local
          ? { onRunNetworkChanged: (runId, policy) => local.networkChanged(runId, policy) }
          : {}),
        metrics: local?.queue.metrics.registry ?? new Registry(),
        log,
      },
      config.listen.http,
    ),
  );
  log.info(
    {
      grpcPort: node.grpcAddress?.port,
      grpcHost: node.grpcAddress?.host,
      apiUrl: api.url,
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
  await api.close();
  await node.close();
  await local?.stop();
  await db.close();
  log.flush();
  exitWhenStopped(log);
}

main().catch((err: unknown) => {
  // A refusal that says what to do is printed as it is; anything else with its stack.
  process.stderr.write(`memql agent node failed: ${startFailureText(err)}\n`);
  process.exit(1);
});
