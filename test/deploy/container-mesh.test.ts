import { randomBytes } from 'node:crypto';
import t from 'tap';
import { listAuditEvents, openDb } from '../../src/store/index.js';
import { eventually } from '../support/mesh.js';
import { createTestDatabase } from '../support/postgres.js';
import { s3NodeEnv, startS3Server } from '../support/s3-server.js';
import {
  freePort,
  image,
  requireImages,
  TestContainer,
  workbenchPrivileges,
} from './containers.js';

/**
 * The mesh as operators run it: the `agent` image and two `workbench` replicas, each
 * its own container with host networking, on the machine's Postgres and an S3 server,
 * with a mesh token and the workbench privileges of `deploy/compose.yaml` (equal to the
 * Kubernetes base's). The runbook's `kubectl exec ... ls /var/lib/memql/workbenches/` is
 * `docker exec` here. A killed replica's run moves with a `node_lost` row and its files;
 * a stopped one hands its runs over with no `node_lost` row and nothing lost.
 */

t.setTimeout(900_000);

const token = `mesh-${randomBytes(12).toString('hex')}`;
const suffix = randomBytes(3).toString('hex');

interface Workspace {
  runId: string;
  nodeId: string;
  status: string;
  releasedReason: string | null;
}

t.test('the mesh in containers', async (t) => {
  await requireImages(['agent', 'workbench']);
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  // The test reads the audit trail the replicas write, as an operator's query would.
  const db = await openDb({ kind: 'postgres', url: database.url });
  t.teardown(() => db.close());
  const s3 = await startS3Server({ bucket: 'memql-deploy' });
  t.teardown(() => s3.stop());

  const sharedEnv = {
    MEMQL_DATABASE_URL: database.url,
    ...s3NodeEnv(s3),
    MEMQL_MESH_TOKEN: token,
    // A killed replica counts as gone after two missed windows: keep the test short.
    MEMQL_NODE_LIVENESS_MS: '3000',
  };

  const privileges = workbenchPrivileges();
  t.ok(privileges.includes('--cap-add'), `the compose file's privileges: ${privileges.join(' ')}`);
  const replicas = new Map<string, TestContainer>();
  const ports = new Map<string, number>();
  for (const n of [1, 2]) {
    const name = `memql-deploy-wb${n}-${suffix}`;
    const port = await freePort();
    ports.set(name, port);
    replicas.set(
      name,
      await TestContainer.run(t, {
        name,
        image: image('workbench'),
        args: [
          '--network',
          'host',
          ...privileges,
          '--mount',
          'type=volume,dst=/var/lib/memql/workbenches',
        ],
        env: {
          ...sharedEnv,
          MEMQL_NODE_ID: name,
          MEMQL_GRPC_LISTEN: `0.0.0.0:${port}`,
        },
        command: ['--shutdown-grace-ms=10000'],
      }),
    );
  }

  const httpPort = await freePort();
  const agent = await TestContainer.run(t, {
    name: `memql-deploy-agent-${suffix}`,
    image: image('agent'),
    args: ['--network', 'host'],
    env: {
      ...sharedEnv,
      MEMQL_NODE_ID: `memql-deploy-agent-${suffix}`,
      MEMQL_HTTP_LISTEN: `127.0.0.1:${httpPort}`,
      MEMQL_WORKER_PEERS: [...ports.values()].map((p) => `workbench=127.0.0.1:${p}`).join(','),
    },
  });
  const base = `http://127.0.0.1:${httpPort}`;

  async function diagnostics(): Promise<string> {
    const parts: string[] = [];
    for (const c of [agent, ...replicas.values()]) {
      parts.push(`--- ${c.name}\n${(await c.logs()).split('\n').slice(-15).join('\n')}`);
    }
    return parts.join('\n');
  }

  await eventually(
    'the agent is ready (its database and a healthy workbench replica)',
    async () => {
      const r = await fetch(`${base}/readyz`).catch(() => null);
      return r?.status === 200;
    },
    120_000,
    250,
  ).catch(async (err: Error) => {
    throw new Error(`${err.message}\n${await diagnostics()}`);
  });

  const made = await agent.exec(['node', '/app/dist/nodes/agent/main.js', 'create-token', 'alice']);
  t.equal(made.code, 0, `create-token in the agent container: ${made.stderr}`);
  const apiToken = made.stdout.trim();

  async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
    const r = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiToken}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await r.text();
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
    return JSON.parse(text) as T;
  }

  type Result = { ok: true; payload: Record<string, unknown> } | { ok: false; errorCode: string };

  const { run } = await api<{ run: { id: string } }>('POST', '/v1/runs', {});
  let calls = 0;
  function dispatch(action: string, args: Record<string, unknown>): Promise<Result> {
    calls += 1;
    return api<Result>('POST', '/v1/dispatch', {
      runId: run.id,
      agentId: 'deploy-test',
      taskId: 'containers',
      callId: `call-${calls}`,
      action,
      args,
    });
  }

  async function workspaces(): Promise<Workspace[]> {
    const all = await api<{ workspaces: Workspace[] }>(
      'GET',
      '/v1/workspaces?includeReleased=true',
    );
    return all.workspaces.filter((w) => w.runId === run.id);
  }

  /** How many takeovers (each one a `node_lost` release) the run has had. */
  async function takeovers(): Promise<number> {
    const events = await listAuditEvents(db, { runId: run.id });
    return events.filter((e) => e.eventType === 'workspace.taken_over').length;
  }

  async function holder(): Promise<TestContainer> {
    const live = (await workspaces()).filter((w) => w.status === 'provisioned');
    if (live.length !== 1)
      throw new Error(`expected one live workspace, got ${JSON.stringify(live)}`);
    const c = replicas.get(live[0]!.nodeId);
    if (!c) throw new Error(`the holder ${live[0]!.nodeId} is not one of the replicas`);
    return c;
  }

  const birds = '# Birds\n\n- wren\n- kestrel\n';

  await t.test(
    'a run written through the agent is on its holder, as the runbook looks',
    async (t) => {
      t.match(await dispatch('fs_write', { path: 'birds.md', content: birds }), { ok: true });
      const exec = await dispatch('exec', { command: 'wc -l birds.md' });
      t.match(
        exec,
        { ok: true, payload: { exitCode: 0 } },
        'a sandboxed command runs in the replica',
      );
      t.match(JSON.stringify(exec), /4 birds\.md/);

      const held = await holder();
      const ls = await held.exec(['ls', '/var/lib/memql/workbenches/']);
      t.equal(ls.code, 0, ls.stderr);
      t.ok(ls.stdout.split('\n').includes(run.id), `ls lists ${run.id}: ${ls.stdout}`);
      const cat = await held.exec(['cat', `/var/lib/memql/workbenches/${run.id}/birds.md`]);
      t.equal(cat.stdout, birds, 'cat shows the bytes written');
    },
  );

  await t.test('a killed replica: the next call moves, node_lost, the file intact', async (t) => {
    const lost = await holder();
    await lost.kill();
    const read = await dispatch('fs_read', { path: 'birds.md' });
    t.match(read, { ok: true, payload: { content: birds } }, 'served by the other replica');
    const now = await holder();
    t.not(now.name, lost.name, 'the run moved');
    t.equal(await takeovers(), 1, 'one takeover');
    t.match(
      (await workspaces()).find((w) => w.nodeId === lost.name),
      { status: 'released', releasedReason: 'node_lost' },
      'the killed replica’s row is node_lost',
    );
    const cat = await now.exec(['cat', `/var/lib/memql/workbenches/${run.id}/birds.md`]);
    t.equal(cat.stdout, birds, 'the new holder has the file on disk');
    t.match(await dispatch('fs_write', { path: 'after-kill.txt', content: 'k\n' }), { ok: true });

    // Back for the next test: the same container, started again.
    await lost.start();
    await eventually(
      'the restarted replica serves again',
      async () =>
        (await lost.logLines()).filter((l) => l.msg === 'workbench node ready').length >= 2,
      120_000,
      250,
    );
    await eventually(
      'the agent reconnects to it',
      async () => {
        const fleet = await api<{ replicas: { nodeId: string; healthy: boolean }[] }>(
          'GET',
          '/v1/fleet/workbenches',
        );
        return fleet.replicas.some((r) => r.nodeId === lost.name && r.healthy);
      },
      60_000,
    );
  });

  await t.test('a stopped replica hands its run over: no node_lost, nothing lost', async (t) => {
    const draining = await holder();
    const before = await takeovers();
    t.match(await dispatch('fs_write', { path: 'before-stop.txt', content: 's\n' }), { ok: true });
    await draining.stop(60);
    t.equal(await draining.exitCode(), 0, 'the replica drained and exited 0 on SIGTERM');

    const list = await dispatch('fs_list', {});
    t.match(list, { ok: true });
    const names =
      list.ok === true
        ? (list.payload.entries as { path: string }[]).map((e) => e.path).sort()
        : [];
    t.same(names, ['after-kill.txt', 'before-stop.txt', 'birds.md'], 'every file is there');
    const now = await holder();
    t.not(now.name, draining.name, 'the other replica holds the run');
    const rows = await workspaces();
    t.equal(await takeovers(), before, 'no takeover, so no node_lost release');
    t.match(
      rows.filter((w) => w.nodeId === draining.name && w.status === 'released').at(-1),
      { releasedReason: 'handed_off' },
      'the drained replica’s row is handed_off',
    );
    const cat = await now.exec(['cat', `/var/lib/memql/workbenches/${run.id}/before-stop.txt`]);
    t.equal(cat.stdout, 's\n');
  });
});
