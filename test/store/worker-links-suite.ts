import type { Test } from 'tap';
import {
  type Db,
  getWorkerHost,
  insertWorkerInvocation,
  listWorkerHosts,
  recordWorkerConnected,
  recordWorkerDisconnected,
  touchWorkerLinks,
} from '../../src/store/index.js';
import { uid } from './store-suite.js';

/**
 * Where a worker host's stream is held, as agent replicas tell each other through the
 * store: the holding node and its address, its word renewed while the stream is up,
 * and the routing record naming where the gate decided and which link carried a call.
 */
export function workerLinksSuite(t: Test, db: Db): void {
  t.test('worker links: the holder, its address, and its word kept fresh', async (t) => {
    const owner = uid('owner');
    await recordWorkerConnected(db, {
      ownerUserId: owner,
      workerId: 'desk',
      os: 'linux',
      provides: ['user_files'],
      version: '1',
      agentNodeId: 'agent-b',
      agentAddress: '10.0.0.2:50060',
    });
    const row = await getWorkerHost(db, owner, 'desk');
    t.match(row, { agentNodeId: 'agent-b', agentAddress: '10.0.0.2:50060', linkLive: true });
    t.equal(await getWorkerHost(db, uid('other'), 'desk'), null, "only the owner's");
    t.equal((await getWorkerHost(db, owner, 'desk', 0))?.linkLive, false, 'past the window');

    await touchWorkerLinks(db, 'agent-a', [{ ownerUserId: owner, workerId: 'desk' }]);
    t.same((await getWorkerHost(db, owner, 'desk'))?.seenAt, row?.seenAt, 'not its holder');
    await touchWorkerLinks(db, 'agent-b', [{ ownerUserId: owner, workerId: 'desk' }]);
    const touched = await getWorkerHost(db, owner, 'desk');
    t.ok((touched?.seenAt.getTime() ?? 0) >= (row?.seenAt.getTime() ?? Infinity), 'renewed');
    await touchWorkerLinks(db, 'agent-b', []);

    await recordWorkerDisconnected(db, owner, 'desk', 'agent-b');
    const [gone] = await listWorkerHosts(db, owner);
    t.match(gone, { linkLive: false, agentNodeId: 'agent-b' }, 'disconnected: not live');
    await touchWorkerLinks(db, 'agent-b', [{ ownerUserId: owner, workerId: 'desk' }]);
    t.equal((await getWorkerHost(db, owner, 'desk'))?.linkLive, false, 'and not revived');

    const record = await insertWorkerInvocation(db, {
      ownerUserId: owner,
      workerId: 'desk',
      runId: uid('run'),
      action: 'fs_read',
      callId: null,
      reroutedFrom: 'workbench',
      needs: ['user_files'],
      scope: 'observe',
      decidedBy: 'agent-a',
      linkNodeId: 'agent-b',
    });
    t.match(record, { decidedBy: 'agent-a', linkNodeId: 'agent-b', status: 'running' });
  });
}
