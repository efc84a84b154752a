import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { startWorkbench } from '../support/mesh-harness.js';
import { nodeMain, spawnNode } from '../support/node-process.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * The agent binary serving the API in remote mode: the fleet lists the workbench
 * replica it is connected to, and calls (promotion included) go over the mesh. The
 * workbench uses MEMQL_RUNNER=process: this test is about the API's wiring, not
 * about isolation (the bwrap API tests and the host suites cover that).
 */

const database = await createTestDatabase();
t.teardown(() => database.drop());
const base = await mkdtemp(join(tmpdir(), 'memql-agent-api-'));
await chmod(base, 0o755);
t.teardown(() => rm(base, { recursive: true, force: true }));
const env = {
  databaseUrl: database.url,
  token: 'agent-api-mesh-token-0123456789',
  baseDir: base,
  objectsDir: join(base, 'objects'),
};

t.test('a remote agent serves the API over its workbench replicas', async (t) => {
  const wb = await startWorkbench(t, env, 'wb-api-1', { host: '127.0.0.1', port: 0 });
  const agentEnv = {
    MEMQL_NODE_ID: 'agent-api',
    MEMQL_DATABASE_URL: database.url,
    MEMQL_DATA_DIR: join(base, 'agent-data'),
    MEMQL_OBJECT_STORE_DIR: env.objectsDir,
    MEMQL_GRPC_LISTEN: '127.0.0.1:0',
    MEMQL_HTTP_LISTEN: '127.0.0.1:0',
    MEMQL_WORKBENCH_REMOTE: '1',
    MEMQL_WORKER_PEERS: `workbench=127.0.0.1:${wb.port}`,
    MEMQL_MESH_TOKEN: env.token,
  };

  const made = await promisify(execFile)(
    process.execPath,
    [nodeMain('agent'), 'create-token', 'erin'],
    { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...agentEnv } },
  );
  const token = made.stdout.trim();
  t.match(token, /^mqt_[A-Za-z0-9_-]{43}$/, 'create-token prints one token');
  const person = await promisify(execFile)(
    process.execPath,
    [nodeMain('agent'), 'create-token', 'erin', '--person'],
    { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...agentEnv } },
  );
  const personToken = person.stdout.trim();
  t.match(personToken, /^mqp_[A-Za-z0-9_-]{43}$/, "with --person, the user's own token");

  const agent = spawnNode(t, 'agent', nodeMain('agent'), agentEnv);
  const ready = await agent.waitForLog((l) => l.msg === 'agent node ready');
  const api = `${String(ready.apiUrl)}/v1`;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field below
  type Json = any;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${api}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };

  const me = await fetch(`${api}/me`, { headers: { authorization: `Bearer ${personToken}` } });
  t.same(await me.json(), { userId: 'erin', tokenKind: 'person' });

  let fleet = await call('GET', '/fleet/workbenches');
  const deadline = Date.now() + 15_000;
  while (!fleet.body.replicas?.[0]?.healthy && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    fleet = await call('GET', '/fleet/workbenches');
  }
  t.equal(fleet.body.mode, 'remote');
  t.equal(fleet.body.replicas.length, 1);
  t.match(fleet.body.replicas[0], {
    nodeId: 'wb-api-1',
    address: `127.0.0.1:${wb.port}`,
    healthy: true,
  });
  t.type(fleet.body.replicas[0].capacity, 'number');
  const since = Date.parse(fleet.body.replicas[0].connectedSince);
  t.ok(since > Date.now() - 60_000 && since <= Date.now(), 'connected since a moment ago');
  // The replica's toolchain probe (its process runner sees this machine's node, npm and
  // git) reaches the fleet through its Health frames.
  while (!fleet.body.replicas[0]?.build?.canBuild && Date.now() < deadline + 30_000) {
    await new Promise((r) => setTimeout(r, 100));
    fleet = await call('GET', '/fleet/workbenches');
  }
  t.same(fleet.body.replicas[0].build, { canBuild: true, missing: [], problem: null });
  const readyz = async () => {
    const res = await fetch(`${String(ready.apiUrl)}/readyz`);
    return { status: res.status, body: (await res.json()) as Json };
  };
  const readyNow = await readyz();
  t.equal(readyNow.status, 200, 'ready with its replica connected');
  t.same(readyNow.body.checks.workbench, { ok: true, detail: '1 of 1 workbench peers healthy' });

  const runId = (await call('POST', '/runs', {})).body.run.id as string;
  const env1 = (action: string, args: object) => ({
    action,
    args,
    runId,
    agentId: 'agent-x',
    taskId: 'task-x',
  });
  const w = await call('POST', '/dispatch', env1('fs_write', { path: 'r.txt', content: 'remote' }));
  t.equal(w.body.ok, true);
  const p = await call('POST', '/dispatch', env1('promote_artifact', { path: 'r.txt' }));
  t.equal(p.body.ok, true, 'promoted on the replica');
  const bytes = await fetch(`${api}/artifacts/${p.body.payload.artifactId}/content`, {
    headers: { authorization: `Bearer ${token}` },
  });
  t.equal(await bytes.text(), 'remote', 'and downloaded from the agent');
  const ws = await call('GET', '/workspaces');
  t.equal(ws.body.workspaces[0].nodeId, 'wb-api-1');

  t.equal((await wb.proc.stop('SIGTERM')).code, 0);
  // Without its only replica the agent stays alive but leaves the ready set.
  let unready = await readyz();
  const until = Date.now() + 30_000;
  while (unready.status !== 503 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    unready = await readyz();
  }
  t.equal(unready.status, 503, 'not ready once its replica is gone');
  t.equal(unready.body.checks.workbench.ok, false);
  t.equal(unready.body.checks.database.ok, true);
  const alive = await fetch(`${String(ready.apiUrl)}/healthz`);
  t.equal(alive.status, 200, 'but alive');
  await alive.body?.cancel();
  t.equal((await agent.stop('SIGTERM')).code, 0);
});
