import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { WorkbenchClient } from '../../src/client/index.js';
import { createApiToken, openDb } from '../../src/store/index.js';
import { bytesUnder, sandboxProcessesOf } from '../support/leftovers.js';
import { eventually } from '../support/mesh.js';
import { type MeshTestEnv, startWorkbench } from '../support/mesh-harness.js';
import { nodeMain, spawnNode } from '../support/node-process.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * A run ended or deleted through a real agent node's HTTP API, its workspace held by a
 * workbench replica in another process (bwrap, Postgres): by the time the call answers,
 * the replica's warm sandbox of the run has no process left, and its warm copy and
 * staged uploads are gone; nothing waits for a sandbox's idle timer or for a sweep.
 */

t.setTimeout(300_000);

const database = await createTestDatabase();
t.teardown(() => database.drop());
const db = await openDb({ kind: 'postgres', url: database.url });
t.teardown(() => db.close());
const baseDir = await mkdtemp(join(tmpdir(), 'memql-runend-'));
await chmod(baseDir, 0o755);
t.teardown(() => rm(baseDir, { recursive: true, force: true }));
const objectsDir = join(baseDir, 'objects');
await mkdir(objectsDir);
const env: MeshTestEnv = {
  databaseUrl: database.url,
  token: 'run-end-mesh-token-0123456789',
  baseDir,
  objectsDir,
};

t.test('ending or deleting a run lets its replica go of it before the answer', async (t) => {
  const wb = await startWorkbench(
    t,
    env,
    'wb-a',
    { host: '127.0.0.1', port: 0 },
    // The sandbox's idle wait is far longer than the test: only the release ends it.
    { MEMQL_RUNNER: 'bwrap', MEMQL_SANDBOX_IDLE_MS: '600000' },
  );
  const root = join(baseDir, 'wb-a', 'workbenches');
  const agent = spawnNode(t, 'agent', nodeMain('agent'), {
    MEMQL_NODE_ID: 'agent-1',
    MEMQL_DATABASE_URL: database.url,
    MEMQL_MESH_TOKEN: env.token,
    MEMQL_WORKBENCH_REMOTE: '1',
    MEMQL_WORKER_PEERS: `workbench=127.0.0.1:${wb.port}`,
    MEMQL_GRPC_LISTEN: '127.0.0.1:0',
    MEMQL_HTTP_LISTEN: '127.0.0.1:0',
    MEMQL_WORKBENCH_ROOT: join(baseDir, 'agent', 'workbenches'),
    MEMQL_DATA_DIR: join(baseDir, 'agent', 'data'),
    MEMQL_OBJECT_STORE_DIR: objectsDir,
  });
  const ready = await agent.waitForLog((l) => l.msg === 'agent node ready', 60_000);
  const client = new WorkbenchClient({
    baseUrl: String(ready.apiUrl),
    token: (await createApiToken(db, 'alice')).token,
  });
  await eventually(
    'the replica is healthy',
    async () => (await client.fleet()).replicas.some((r) => r.healthy),
    60_000,
  );

  for (const how of ['end', 'delete'] as const) {
    const run = await client.createRun();
    const ran = await client.dispatch({
      action: 'exec',
      args: { command: 'true' },
      runId: run.id,
      agentId: 'a',
      taskId: 't',
    });
    t.equal(ran.ok, true, ran.ok ? '' : ran.message);
    t.not((await sandboxProcessesOf(root, run.id)).length, 0, `${how}: a warm sandbox waits`);
    const staged = await client.dispatch({
      action: 'fs_write',
      args: {
        path: 'big.bin',
        content: randomBytes(1024 * 1024).toString('base64'),
        encoding: 'base64',
        upload: { id: 'upload-mesh', offset: 0 },
      },
      runId: run.id,
      agentId: 'a',
      taskId: 't',
    });
    t.equal(staged.ok, true);
    t.equal(await bytesUnder(join(root, '.uploads', run.id)), 1024 * 1024, `${how}: staged`);
    if (how === 'end') await client.endRun(run.id, 'succeeded');
    else await client.deleteRun(run.id);
    t.same(await sandboxProcessesOf(root, run.id), [], `${how}: no sandbox process is left`);
    t.equal(await bytesUnder(join(root, '.uploads', run.id)), 0, `${how}: no staged byte`);
    t.equal(await bytesUnder(join(root, run.id)), 0, `${how}: no warm copy`);
  }
  t.equal((await agent.stop('SIGTERM', 60_000)).code, 0);
  t.equal((await wb.proc.stop('SIGTERM', 60_000)).code, 0);
});
