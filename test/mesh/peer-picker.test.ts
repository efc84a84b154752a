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
    if (c.key) t.equal(pick.kind !== 'none' && pick.peer.key, c.key, `${c.name}: peer`);
  }
});

t.test('a substitute names the node it replaces', async (t) => {
  const pick = pickPeer([a], 'wb-b');
  t.same(pick, { kind: 'substitute', peer: a, preferredNodeId: 'wb-b' });
});

t.test('the input is not reordered', async (t) => {
  const peers = [b, a];
  pickPeer(peers, null);
  t.same(peers, [b, a]);
});
