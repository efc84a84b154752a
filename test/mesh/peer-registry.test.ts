import pino from 'pino';
import t from 'tap';
import type { PeerSeed } from '../../src/config/index.js';
import { MeshServer } from '../../src/mesh/mesh-server.js';
import type { PeerEndpoint } from '../../src/mesh/peer-connection.js';
import { PeerRegistry, type PeerResolver } from '../../src/mesh/peer-registry.js';
import { eventually } from '../support/mesh.js';

/** The registry against real servers on two loopback addresses, with an injected resolver. */

const log = pino({ level: 'silent' });
const TOKEN = 'registry-test-token-0123456789';
const seed: PeerSeed = {
  type: 'workbench',
  host: 'workbench',
  port: 50060,
  raw: 'workbench=workbench:50060',
};

async function server(nodeId: string, host: string, port = 0) {
  const s = new MeshServer({
    nodeId,
    nodeType: 'workbench',
    version: 't',
    token: TOKEN,
    tls: null,
    log,
    handler: async () => ({ ok: true }),
    healthIntervalMs: 100,
  });
  const bound = await s.start({ host, port });
  return { s, port: bound.port };
}

t.test('one seed, two addresses, two peers; re-resolving adds and drops replicas', async (t) => {
  const a = await server('wb-a', '127.0.0.1');
  t.teardown(() => a.s.close());
  const b = await server('wb-b', '127.0.0.2', a.port);
  t.teardown(() => b.s.close());

  let answer: PeerEndpoint[] | Error = [
    { host: '127.0.0.1', port: a.port, serverName: 'workbench' },
  ];
  const asked: string[] = [];
  const resolver: PeerResolver = async (s) => {
    asked.push(`${s.host}:${s.port}`);
    if (answer instanceof Error) throw answer;
    return answer;
  };
  const registry = new PeerRegistry({
    seeds: [seed],
    self: { nodeId: 'agent', nodeType: 'agent', version: 't' },
    token: TOKEN,
    tls: null,
    log,
    resolver,
    resolveIntervalMs: 60_000,
  });
  t.teardown(() => registry.close());
  await registry.start();
  t.same(asked, ['workbench:50060'], 'the known-good seed is resolved, not dropped');
  await eventually('wb-a healthy', () =>
    registry.views().some((p) => p.nodeId === 'wb-a' && p.healthy),
  );

  answer = [
    { host: '127.0.0.1', port: a.port, serverName: 'workbench' },
    { host: '127.0.0.2', port: a.port, serverName: 'workbench' },
  ];
  await registry.resolveNow();
  await eventually('both healthy', () => registry.views().filter((p) => p.healthy).length === 2);
  t.same(
    registry
      .views()
      .map((p) => p.nodeId)
      .sort(),
    ['wb-a', 'wb-b'],
  );

  answer = new Error('SERVFAIL');
  await registry.resolveNow();
  t.equal(registry.views().length, 2, 'a failed resolution keeps the replicas it had');

  answer = [{ host: '127.0.0.2', port: a.port, serverName: 'workbench' }];
  await registry.resolveNow();
  t.same(
    registry.views().map((p) => p.nodeId),
    ['wb-b'],
    'a replica gone from DNS is dropped',
  );
});

t.test('a peer is healthy only while its health is fresh and healthy', async (t) => {
  const a = await server('wb-a', '127.0.0.1');
  let clock = Date.now();
  const registry = new PeerRegistry({
    seeds: [seed],
    self: { nodeId: 'agent', nodeType: 'agent', version: 't' },
    token: TOKEN,
    tls: null,
    log,
    resolver: async () => [{ host: '127.0.0.1', port: a.port, serverName: 'workbench' }],
    now: () => clock,
    healthStaleMs: 1_000,
    backoff: { initialMs: 50, maxMs: 100, multiplier: 2 },
  });
  t.teardown(() => registry.close());
  await registry.start();
  await eventually('healthy', () => registry.views()[0]?.healthy === true);
  clock += 60_000;
  t.match(registry.views()[0], { connected: true, healthy: false }, 'stale health is not healthy');
  clock = Date.now();
  await eventually('fresh again', () => registry.views()[0]?.healthy === true);

  const drained = a.s.drain(1_000);
  await eventually('reported unhealthy', () => registry.views()[0]?.healthy === false);
  t.equal(registry.views()[0]?.connected, true, 'still connected while draining');
  await drained;
  await a.s.close();
  await eventually('disconnected', () => registry.views()[0]?.connected === false);
});

t.test('waitForChange wakes on a change, or times out', async (t) => {
  const registry = new PeerRegistry({
    seeds: [],
    self: { nodeId: 'agent', nodeType: 'agent', version: 't' },
    token: null,
    tls: null,
    log,
  });
  await registry.start();
  const started = Date.now();
  await registry.waitForChange(100);
  t.ok(Date.now() - started >= 90);
  registry.close();
});
