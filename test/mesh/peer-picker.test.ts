import t from 'tap';
import { type PeerView, pickPeer } from '../../src/mesh/peer-picker.js';

function peer(key: string, nodeId: string | null, more: Partial<PeerView> = {}): PeerView {
  return {
    key,
    nodeId,
    connected: true,
    healthy: true,
    running: 0,
    queued: 0,
    capacity: 4,
    ...more,
  };
}

const a = peer('10.0.0.1:50060', 'wb-a');
const b = peer('10.0.0.2:50060', 'wb-b');

t.test('the table', async (t) => {
  const cases: {
    name: string;
    peers: PeerView[];
    preferred: string | null;
    kind: string;
    key?: string;
  }[] = [
    { name: 'no peers', peers: [], preferred: null, kind: 'none' },
    { name: 'no peers, pinned', peers: [], preferred: 'wb-a', kind: 'none' },
    {
      name: 'only unhealthy peers',
      peers: [peer('x:1', 'x', { healthy: false }), peer('y:1', 'y', { connected: false })],
      preferred: null,
      kind: 'none',
    },
    {
      name: 'pinned and healthy wins',
      peers: [a, b],
      preferred: 'wb-b',
      kind: 'pinned',
      key: b.key,
    },
    {
      name: 'pinned wins even when busier',
      peers: [a, peer(b.key, 'wb-b', { running: 4, queued: 9 })],
      preferred: 'wb-b',
      kind: 'pinned',
      key: b.key,
    },
    {
      name: 'pinned but unhealthy: substitute',
      peers: [a, peer(b.key, 'wb-b', { healthy: false })],
      preferred: 'wb-b',
      kind: 'substitute',
      key: a.key,
    },
    {
      name: 'pinned but disconnected: substitute',
      peers: [a, peer(b.key, 'wb-b', { connected: false, healthy: true })],
      preferred: 'wb-b',
      kind: 'substitute',
      key: a.key,
    },
    {
      name: 'pinned node unknown: substitute',
      peers: [a, b],
      preferred: 'wb-gone',
      kind: 'substitute',
      key: a.key,
    },
    {
      name: 'unpinned: least loaded relative to capacity',
      peers: [
        peer('p:1', 'p', { running: 2, capacity: 4 }),
        peer('q:1', 'q', { running: 3, capacity: 8 }),
      ],
      preferred: null,
      kind: 'unpinned',
      key: 'q:1',
    },
    {
      name: 'queued work counts as load',
      peers: [peer('p:1', 'p', { running: 1, queued: 3 }), peer('q:1', 'q', { running: 2 })],
      preferred: null,
      kind: 'unpinned',
      key: 'q:1',
    },
    {
      name: 'equal load: lowest key, so picks are stable',
      peers: [b, a],
      preferred: null,
      kind: 'unpinned',
      key: a.key,
    },
    {
      name: 'zero capacity counts calls whole',
      peers: [
        peer('p:1', 'p', { running: 1, capacity: 0 }),
        peer('q:1', 'q', { running: 0, capacity: 0 }),
      ],
      preferred: null,
      kind: 'unpinned',
      key: 'q:1',
    },
    {
      name: 'a peer without hello never matches the pin',
      peers: [peer('p:1', null)],
      preferred: 'wb-a',
      kind: 'substitute',
      key: 'p:1',
    },
  ];
  for (const c of cases) {
    const pick = pickPeer(c.peers, c.preferred);
    t.equal(pick.kind, c.kind, `${c.name}: kind`);
    if (c.key) t.equal('peer' in pick && pick.peer.key, c.key, `${c.name}: peer`);
  }
});

t.test('a substitute names the node it replaces', async (t) => {
  const pick = pickPeer([a], 'wb-b');
  t.same(pick, { kind: 'substitute', peer: a, preferredNodeId: 'wb-b', reason: 'unavailable' });
});

t.test('a build goes only to a replica that reported every build tool', async (t) => {
  const able = { toolchain: { status: 'probed', missing: [] } } as const;
  const noNpm = { toolchain: { status: 'probed', missing: ['npm'] } } as const;
  const failed = { toolchain: { status: 'probe_failed', reason: 'no sandbox' } } as const;
  const x = peer('10.0.0.1:50060', 'wb-a', able);
  const y = peer('10.0.0.2:50060', 'wb-b', noNpm);
  const z = peer('10.0.0.3:50060', 'wb-c'); // no report: still probing, or an older version
  const busyAble = peer('10.0.0.4:50060', 'wb-d', { ...able, running: 4, queued: 8 });
  const cases: {
    name: string;
    peers: PeerView[];
    preferred: string | null;
    kind: string;
    key?: string;
    reason?: string;
  }[] = [
    {
      name: 'holder can build: pinned',
      peers: [x, y],
      preferred: 'wb-a',
      kind: 'pinned',
      key: x.key,
    },
    {
      name: 'holder cannot: a capable replica substitutes, however busy',
      peers: [y, busyAble],
      preferred: 'wb-b',
      kind: 'substitute',
      key: busyAble.key,
      reason: 'cannot_build',
    },
    {
      name: 'holder unknown (no report): substitute',
      peers: [z, x],
      preferred: 'wb-c',
      kind: 'substitute',
      key: x.key,
      reason: 'cannot_build',
    },
    {
      name: 'holder gone: substitute, as for any call',
      peers: [x, peer(y.key, 'wb-b', { ...noNpm, healthy: false })],
      preferred: 'wb-b',
      kind: 'substitute',
      key: x.key,
      reason: 'unavailable',
    },
    {
      name: 'no affinity: a capable one',
      peers: [y, z, x],
      preferred: null,
      kind: 'unpinned',
      key: x.key,
    },
    {
      name: 'none can build',
      peers: [y, z, peer('f:1', 'wb-f', failed)],
      preferred: 'wb-b',
      kind: 'incapable',
    },
    {
      name: 'the only capable replica is unhealthy',
      peers: [y, peer(x.key, 'wb-a', { ...able, healthy: false })],
      preferred: null,
      kind: 'incapable',
    },
    {
      name: 'no healthy replica at all',
      peers: [peer(x.key, 'wb-a', { ...able, connected: false })],
      preferred: null,
      kind: 'none',
    },
  ];
  for (const c of cases) {
    const pick = pickPeer(c.peers, c.preferred, { build: true });
    t.equal(pick.kind, c.kind, `${c.name}: kind`);
    if (c.key) t.equal('peer' in pick && pick.peer.key, c.key, `${c.name}: peer`);
    if (c.reason) t.equal(pick.kind === 'substitute' && pick.reason, c.reason, `${c.name}: reason`);
  }
  const none = pickPeer([y, z], null, { build: true });
  t.same(
    none.kind === 'incapable' && none.peers.map((p) => p.nodeId),
    ['wb-b', 'wb-c'],
    'incapable lists the healthy replicas considered',
  );
  t.equal(pickPeer([y, z], 'wb-b').kind, 'pinned', 'other calls ignore the toolchain');
});

t.test('the input is not reordered', async (t) => {
  const peers = [b, a];
  pickPeer(peers, null);
  t.same(peers, [b, a]);
});
