import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { type MeshTestEnv, startWorkbench } from '../support/mesh-harness.js';
import { nodeMain, spawnNode } from '../support/node-process.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * Secure by default, on the compiled binaries: a workbench node asked to serve the
 * mesh on every interface with no token, no mutual TLS and no insecure switch exits 2
 * before it opens anything; with a token, or with the switch, it serves. The agent
 * node serves only health on its gRPC address, so it is not refused.
 */

const database = await createTestDatabase();
t.teardown(() => database.drop());
const baseDir = await mkdtemp(join(tmpdir(), 'memql-exposure-'));
await chmod(baseDir, 0o755);
t.teardown(() => rm(baseDir, { recursive: true, force: true }));
await mkdir(join(baseDir, 'objects'));
const env: MeshTestEnv = {
  databaseUrl: database.url,
  token: 'exposure-test-token-0123456789',
  baseDir,
  objectsDir: join(baseDir, 'objects'),
};
const EVERY_INTERFACE = { host: '0.0.0.0', port: 0 };

/** The environment of a workbench node on `0.0.0.0:0` with no token. */
function openWorkbenchEnv(nodeId: string): Record<string, string> {
  return {
    MEMQL_NODE_ID: nodeId,
    MEMQL_DATABASE_URL: database.url,
    MEMQL_WORKBENCH_ROOT: join(baseDir, nodeId, 'workbenches'),
    MEMQL_DATA_DIR: join(baseDir, nodeId, 'data'),
    MEMQL_OBJECT_STORE_DIR: env.objectsDir,
    MEMQL_GRPC_LISTEN: '0.0.0.0:0',
    MEMQL_RUNNER: 'process',
    MEMQL_LOG_LEVEL: 'info',
  };
}

t.test('a workbench on 0.0.0.0 with no token refuses to start: exit 2', async (t) => {
  const proc = spawnNode(t, 'wb-open', nodeMain('workbench'), openWorkbenchEnv('wb-open'));
  const exit = await proc.exited;
  t.strictSame(exit, { code: 2, signal: null });
  for (const name of [
    'MEMQL_GRPC_LISTEN',
    'MEMQL_MESH_TOKEN',
    'MEMQL_TLS_CERT_FILE',
    'MEMQL_TLS_KEY_FILE',
    'MEMQL_TLS_CA_FILE',
    'MEMQL_MESH_INSECURE',
  ]) {
    t.ok(proc.stderr.includes(name), `stderr names ${name}`);
  }
  t.notOk(
    proc.lines.some((l) => l.msg === 'workbench node ready'),
    'it never served',
  );
});

t.test('a workbench on 0.0.0.0 with a token starts and stops cleanly', async (t) => {
  const wb = await startWorkbench(t, env, 'wb-token', EVERY_INTERFACE);
  t.ok(wb.port > 0, `serving on port ${wb.port}`);
  t.strictSame(await wb.proc.stop('SIGTERM'), { code: 0, signal: null });
});

t.test('with MEMQL_MESH_INSECURE=1 it starts, and warns', async (t) => {
  const proc = spawnNode(t, 'wb-insecure', nodeMain('workbench'), {
    ...openWorkbenchEnv('wb-insecure'),
    MEMQL_MESH_INSECURE: '1',
  });
  await proc.waitForLog((l) => l.msg === 'workbench node ready');
  t.ok(
    proc.lines.some((l) => l.level === 40 && l.variable === 'MEMQL_MESH_INSECURE'),
    'a warning line names MEMQL_MESH_INSECURE',
  );
  t.strictSame(await proc.stop('SIGTERM'), { code: 0, signal: null });
});

t.test('an agent node on 0.0.0.0 with no token is not refused', async (t) => {
  const dir = join(baseDir, 'agent');
  const proc = spawnNode(t, 'agent', nodeMain('agent'), {
    MEMQL_NODE_ID: 'agent-open',
    MEMQL_DATABASE_URL: database.url,
    MEMQL_WORKBENCH_ROOT: join(dir, 'workbenches'),
    MEMQL_DATA_DIR: join(dir, 'data'),
    MEMQL_OBJECT_STORE_DIR: env.objectsDir,
    MEMQL_GRPC_LISTEN: '0.0.0.0:0',
    MEMQL_HTTP_LISTEN: '127.0.0.1:0',
    MEMQL_RUNNER: 'process',
    MEMQL_LOG_LEVEL: 'info',
  });
  const ready = await proc.waitForLog((l) => l.msg === 'agent node ready');
  t.equal(ready.grpcHost, '0.0.0.0');
  t.strictSame(await proc.stop('SIGTERM'), { code: 0, signal: null });
});
