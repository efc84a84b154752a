import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createRun, getLiveWorkspace, openDb } from '../../src/store/index.js';
import { eventually } from '../support/mesh.js';
import { AgentHarness, type MeshTestEnv, startWorkbench } from '../support/mesh-harness.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * One agent and two workbench replicas, each its own process, on real sockets and a
 * real Postgres: affinity, replica loss and takeover, reconnection, and the seed
 * `workbench=workbench:50060` resolving (through an injected resolver) to both.
 */

const database = await createTestDatabase();
t.teardown(() => database.drop());
const db = await openDb({ kind: 'postgres', url: database.url });
t.teardown(() => db.close());
await createRun(db, { id: 'run-1', ownerUserId: 'alice' });

const baseDir = await mkdtemp(join(tmpdir(), 'memql-mesh-'));
await chmod(baseDir, 0o755);
t.teardown(() => rm(baseDir, { recursive: true, force: true }));
const objectsDir = join(baseDir, 'objects');
await mkdir(objectsDir);
const env: MeshTestEnv = {
  databaseUrl: database.url,
  token: 'mesh-test-token-0123456789',
  baseDir,
  objectsDir,
};

const rows = async (runId: string) =>
  db.query<{ node_id: string; status: string; released_reason: string | null }>(
    'select node_id, status, released_reason from workbench_workspace where run_id = $1 order by created_at',
    [runId],
  );

let task = 0;
const call = (action: string, args: Record<string, unknown>, runId = 'run-1') => {
  task += 1;
  return { action, args, runId, agentId: 'agent', taskId: `task-${task}` };
};

t.test('affinity, replica loss, takeover and reconnect', async (t) => {
  const a = await startWorkbench(t, env, 'wb-a', { host: '127.0.0.1', port: 0 });
  const b = await startWorkbench(t, env, 'wb-b', { host: '127.0.0.2', port: a.port });
  const replicas = [a, b];
  const agent = await AgentHarness.start(
    t,
    {
      MEMQL_DATABASE_URL: database.url,
      MEMQL_MESH_TOKEN: env.token,
      MEMQL_WORKBENCH_REMOTE: '1',
      MEMQL_WORKER_PEERS: 'workbench=workbench:50060',
    },
    {
      workbench: [
        { host: '127.0.0.1', port: a.port },
        { host: '127.0.0.2', port: a.port },
      ],
    },
  );

  await t.test('the one seed resolves to two replicas, one stream each', async (t) => {
    await eventually('both replicas healthy', async () => {
      const peers = await agent.peers();
      return peers.length === 2 && peers.every((p) => p.healthy);
    });
    const peers = await agent.peers();
    t.same(peers.map((p) => p.key).sort(), [`127.0.0.1:${a.port}`, `127.0.0.2:${a.port}`]);
    t.same(peers.map((p) => p.nodeId).sort(), ['wb-a', 'wb-b']);
  });

  let servedBy = '';
  await t.test('100 calls for one run all land on its replica', async (t) => {
    const first = await agent.dispatch(
      call('fs_write', { path: 'notes/hello.txt', content: 'hello\n' }),
    );
    t.equal(first.result.ok, true, JSON.stringify(first.result));
    t.equal(first.route.kind, 'remote');
    servedBy = first.route.kind === 'remote' ? (first.route.nodeId ?? '') : '';
    t.ok(['wb-a', 'wb-b'].includes(servedBy));
    const nodes = new Set<string>();
    let calls = 1;
    const failures: string[] = [];
    for (let i = 1; i < 100; i += 10) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(10, 100 - i) }, (_, j) =>
          agent.dispatch(
            (i + j) % 2 === 0
              ? call('fs_read', { path: 'notes/hello.txt' })
              : call('fs_write', { path: `notes/n${i + j}.txt`, content: `${i + j}` }),
          ),
        ),
      );
      for (const r of batch) {
        calls += 1;
        if (r.route.kind === 'remote') nodes.add(r.route.nodeId ?? '?');
        if (!r.result.ok) failures.push(r.result.errorCode);
      }
    }
    t.equal(calls, 100);
    t.same([...nodes], [servedBy], 'every call went to the same replica');
    t.same(failures, []);
    const live = await getLiveWorkspace(db, 'run-1');
    t.equal(live?.nodeId, servedBy, 'the workspace row names that replica');
    t.equal((await rows('run-1')).length, 1, 'one workspace row, never a second');
  });

  await t.test('exec output streams over the mesh', async (t) => {
    const r = await agent.dispatch(call('exec', { command: 'echo streamed-line' }));
    t.equal(r.result.ok, true, JSON.stringify(r.result));
    t.match(r.output.join(''), 'streamed-line');
    t.match(r.route, { kind: 'remote', nodeId: servedBy, pick: 'pinned' });
  });

  const lost = replicas.find((r) => r.nodeId === servedBy)!;
  const other = replicas.find((r) => r.nodeId !== servedBy)!;

  await t.test(
    'killing the replica moves the run to the other, with a node_lost row',
    async (t) => {
      await lost.proc.stop('SIGKILL');
      await eventually('agent sees the replica gone', async () =>
        (await agent.peers()).some((p) => p.nodeId === lost.nodeId && !p.connected),
      );
      const r = await agent.dispatch(call('fs_write', { path: 'after.txt', content: 'x' }));
      t.equal(r.result.ok, true, JSON.stringify(r.result));
      t.match(r.route, {
        kind: 'remote',
        nodeId: other.nodeId,
        pick: 'substitute',
        previousNodeId: lost.nodeId,
      });
      t.same(await rows('run-1'), [
        { node_id: lost.nodeId, status: 'released', released_reason: 'node_lost' },
        { node_id: other.nodeId, status: 'provisioned', released_reason: null },
      ]);
      const warning = await agent.proc.waitForLog(
        (l) => l.level === 40 && l.previousNodeId === lost.nodeId && l.nodeId === other.nodeId,
        5_000,
      );
      t.equal(warning.runId, 'run-1', 'the agent WARNING names both nodes and the run');
      // Killed a moment ago, it may still count as live by its heartbeat: then the
      // takeover says the agent could not reach it. Either way the old row is node_lost.
      await other.proc.waitForLog(
        (l) => l.msg.startsWith('workspace taken over from') && l.previousNodeId === lost.nodeId,
        5_000,
      );

      const again = await agent.dispatch(call('fs_list', {}));
      t.match(
        again.route,
        { kind: 'remote', nodeId: other.nodeId, pick: 'pinned' },
        'later calls adopt',
      );
      t.equal((await rows('run-1')).length, 2, 'the takeover happened once');
    },
  );

  await t.test('files written before the loss are intact on the substitute', async (t) => {
    const r = await agent.dispatch(call('fs_read', { path: 'notes/hello.txt' }));
    t.match(r.result, { ok: true, payload: { content: 'hello\n' } });
    t.match(r.route, { nodeId: other.nodeId });
    const list = await agent.dispatch(call('fs_list', { path: 'notes' }));
    const names = list.result.ok
      ? (list.result.payload as { entries: { path: string }[] }).entries.map((e) => e.path)
      : [];
    t.equal(names.length, 1 + 50, 'hello.txt and the 50 files written by the 100 calls');
  });

  await t.test('the restarted replica is reconnected; the run stays where it is', async (t) => {
    const back = await startWorkbench(t, env, lost.nodeId, { host: lost.host, port: lost.port });
    await eventually(
      'agent reconnected to the restarted replica',
      async () => (await agent.peers()).some((p) => p.nodeId === lost.nodeId && p.healthy),
      20_000,
    );
    const r = await agent.dispatch(call('fs_list', {}));
    t.match(r.route, { kind: 'remote', nodeId: other.nodeId, pick: 'pinned' });
    t.equal((await agent.stop()).code, 0, 'the agent stops cleanly');
    t.equal((await back.proc.stop()).code, 0, 'a workbench stops cleanly on SIGTERM');
    t.equal((await other.proc.stop()).code, 0);
  });
});
