/**
 * The worker host (`npm run worker`, `node dist/nodes/worker/main.js`): runs on a
 * user's own machine, dials out to the agent node at `MEMQL_WORKER_AGENT` with the
 * user's API token, and serves the file actions and `exec` against
 * `MEMQL_WORKER_ROOT`. Wiring only: load config (exit 2 on a bad or missing
 * variable), refuse a root that is not a directory (exit 2), detect or read the offer,
 * start, and stop on SIGTERM or SIGINT (exit 0). A token the agent refuses stops the
 * worker with exit code 2 and says what to do.
 *
 * Flags: `--shutdown-grace-ms=<ms>` (default 5000): how long calls in flight get to
 * answer after a stop signal before they are aborted.
 */

import { existsSync, readdirSync } from 'node:fs';
import { homedir, hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { packageVersion } from '../../src/mesh/index.js';
import { detectProvides, startWorkerNode, workerRootProblem } from '../../src/worker/index.js';
import { bootNode, shutdownGraceMs, workerNodeId } from '../node-boot.js';

const DEFAULT_GRACE_MS = 5_000;

async function main(): Promise<void> {
  const grace = shutdownGraceMs(process.argv.slice(2), DEFAULT_GRACE_MS);
  // The worker's own state (its id) lives in a directory of its user's, not the
  // server default under /var/lib.
  const dataDir = resolve(
    process.cwd(),
    process.env.MEMQL_DATA_DIR || join(homedir(), '.memql', 'worker'),
  );
  const nodeId = process.env.MEMQL_NODE_ID || workerNodeId(dataDir, hostname());
  const { config, log } = bootNode('worker', {
    worker: true,
    defaults: { MEMQL_DATA_DIR: dataDir, MEMQL_NODE_ID: nodeId },
  });
  const settings = config.worker;
  // loadConfig with `worker` reports a missing setting, so bootNode has exited then.
  if (settings === null) throw new Error('worker settings missing after loadConfig');
  const problem = await workerRootProblem(settings.root);
  if (problem !== null) {
    process.stderr.write(`memql worker: ${problem}\n`);
    process.exit(2);
  }
  const provides =
    settings.provides ??
    detectProvides({
      env: process.env,
      platform: process.platform,
      exists: existsSync,
      list: (dir) => {
        try {
          return readdirSync(dir);
        } catch {
          return [];
        }
      },
    });
  log.info(
    { provides, source: settings.provides === null ? 'detected' : 'MEMQL_WORKER_PROVIDES' },
    'what this worker provides',
  );

  let refusal: string | null = null;
  let refused = () => {};
  const node = startWorkerNode({
    nodeId: config.nodeId,
    version: packageVersion(),
    agent: settings.agent,
    token: settings.token,
    tls: config.mesh.tls,
    root: settings.root,
    provides,
    capacity: settings.capacity,
    platform: process.platform,
    sessionEnv: process.env,
    exec: config.exec,
    log,
    onRefused: (message) => {
      refusal = message;
      refused();
    },
  });
  // The refusal comes with the stream's status, after this has run.
  const reason = await new Promise<string>((done) => {
    refused = () => done('token refused');
    process.once('SIGINT', () => done('SIGINT'));
    process.once('SIGTERM', () => done('SIGTERM'));
  });
  log.info({ reason, graceMs: grace }, 'stopping: no new calls');
  const outcome = await node.stop(refusal === null ? grace : 0);
  log.info(outcome, 'stopped');
  log.flush();
  if (refusal !== null) {
    process.stderr.write(`memql worker: ${refusal}\n`);
    process.exit(2);
  }
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`memql worker failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
