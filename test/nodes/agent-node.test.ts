import t from 'tap';
import { pythonHealthCheck } from '../support/mesh.js';
import { nodeMain, spawnNode } from '../support/node-process.js';
import { createTestDatabase } from '../support/postgres.js';

/** The agent binary: boots from its environment, serves grpc.health.v1, stops cleanly. */

const database = await createTestDatabase();
t.teardown(() => database.drop());

t.test('remote agent: health is served to an independent client', async (t) => {
  const agent = spawnNode(t, 'agent', nodeMain('agent'), {
    MEMQL_NODE_ID: 'agent-bin',
    MEMQL_DATABASE_URL: database.url,
    MEMQL_GRPC_LISTEN: '127.0.0.1:0',
    MEMQL_HTTP_LISTEN: '127.0.0.1:0',
    MEMQL_WORKBENCH_REMOTE: '1',
    // A name that never resolves: the agent boots, warns, and keeps trying.
    MEMQL_WORKER_PEERS: 'workbench=workbench.invalid:50060',
    MEMQL_MESH_TOKEN: 'agent-test-token-0123456789',
  });
  const ready = await agent.waitForLog((l) => l.msg === 'agent node ready');
  t.match(ready, { remote: true, localFallback: false });
  await agent.waitForLog((l) => l.level === 40 && l.seed === 'workbench=workbench.invalid:50060');
  t.equal(await pythonHealthCheck(`127.0.0.1:${ready.grpcPort}`), 'SERVING');
  t.equal((await agent.stop('SIGTERM')).code, 0, 'SIGTERM stops it cleanly');
});

t.test('remote without a workbench seed does not start', async (t) => {
  const agent = spawnNode(t, 'agent', nodeMain('agent'), {
    MEMQL_DATABASE_URL: database.url,
    MEMQL_GRPC_LISTEN: '127.0.0.1:0',
    MEMQL_HTTP_LISTEN: '127.0.0.1:0',
    MEMQL_WORKBENCH_REMOTE: '1',
  });
  const exit = await agent.exited;
  t.equal(exit.code, 2);
  t.match(agent.stderr, 'MEMQL_WORKER_PEERS');
});

t.test('local agent: the in-process workbench, health served', async (t) => {
  const agent = spawnNode(t, 'agent', nodeMain('agent'), {
    MEMQL_NODE_ID: 'agent-local',
    MEMQL_DATABASE_URL: database.url,
    MEMQL_GRPC_LISTEN: '127.0.0.1:0',
    MEMQL_HTTP_LISTEN: '127.0.0.1:0',
    MEMQL_WORKBENCH_ROOT: '/tmp/memql-agent-node-test/wb',
    MEMQL_RUNNER: 'process',
  });
  const ready = await agent.waitForLog((l) => l.msg === 'agent node ready');
  t.match(ready, { remote: false, peers: 0 });
  t.equal(await pythonHealthCheck(`127.0.0.1:${ready.grpcPort}`), 'SERVING');
  t.equal((await agent.stop('SIGINT')).code, 0);
});
