import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import {
  createRun,
  getLiveWorkspace,
  listAuditEvents,
  listWorkspacesForOwner,
  openDb,
  type Workspace,
} from '../../src/store/index.js';
import { decideProvision, ensureWorkspace } from '../../src/workbench/workspace-lifecycle.js';
import { createTestDatabase } from '../support/postgres.js';

function row(nodeId: string | null): Workspace {
  const now = new Date();
  return {
    id: `ws-${nodeId}`,
    runId: 'r',
    nodeId,
    ownerUserId: 'u',
    status: 'provisioned',
    releasedReason: null,
    createdAt: now,
    updatedAt: now,
    releasedAt: null,
  };
}

t.test('decideProvision', async (t) => {
  t.same(decideProvision(null, 'a'), { kind: 'create' });
  t.equal(decideProvision(row('a'), 'a').kind, 'adopt', 'its own row is adopted');
  t.equal(decideProvision(row(null), 'a').kind, 'adopt', 'a row naming nobody is adopted');
  const takeover = decideProvision(row('b'), 'a');
  t.equal(takeover.kind, 'takeover', 'a row naming another node is taken over');
  t.equal(takeover.kind === 'takeover' && takeover.previous.nodeId, 'b');
});

const database = await createTestDatabase();
t.teardown(() => database.drop());
const db = await openDb({ kind: 'postgres', url: database.url });
t.teardown(() => db.close());
const root = await mkdtemp(join(tmpdir(), 'memql-wb-'));
t.teardown(() => rm(root, { recursive: true, force: true }));
const log = pino({ level: 'silent' });

t.test('create, adopt, take over once, then adopt the successor', async (t) => {
  await createRun(db, { id: 'run-a', ownerUserId: 'owner-1' });
  const onA = { db, nodeId: 'node-a', workbenchRoot: root, log };
  const onB = { ...onA, nodeId: 'node-b' };

  const first = await ensureWorkspace(onA, { id: 'run-a', ownerUserId: 'owner-1' });
  t.equal(first.decision, 'create');
  t.equal(first.dir, join(root, 'run-a'));
  t.ok((await stat(first.dir)).isDirectory());
  t.equal((await ensureWorkspace(onA, { id: 'run-a', ownerUserId: 'owner-1' })).decision, 'adopt');

  const moved = await ensureWorkspace(onB, { id: 'run-a', ownerUserId: 'owner-1' });
  t.equal(moved.decision, 'takeover');
  t.equal(moved.previous?.nodeId, 'node-a');
  t.equal(moved.workspace.nodeId, 'node-b');
  const again = await ensureWorkspace(onB, { id: 'run-a', ownerUserId: 'owner-1' });
  t.equal(again.decision, 'adopt', 'the takeover happens once');

  const all = await listWorkspacesForOwner(db, 'owner-1', { includeReleased: true });
  t.same(all.map((w) => [w.nodeId, w.status, w.releasedReason]).sort(), [
    ['node-a', 'released', 'node_lost'],
    ['node-b', 'provisioned', null],
  ]);
  const events = await listAuditEvents(db, { runId: 'run-a' });
  t.same(
    events.map((e) => e.eventType),
    ['workspace.provisioned', 'workspace.taken_over'],
  );
  t.equal(events[1]!.metadata.previousNodeId, 'node-a');
});

t.test('concurrent first calls end with one live row', async (t) => {
  await createRun(db, { id: 'run-race', ownerUserId: 'owner-2' });
  const deps = { db, nodeId: 'node-a', workbenchRoot: root, log };
  const results = await Promise.all(
    Array.from({ length: 6 }, () =>
      ensureWorkspace(deps, { id: 'run-race', ownerUserId: 'owner-2' }),
    ),
  );
  t.equal(new Set(results.map((r) => r.workspace.id)).size, 1);
  t.equal(results.filter((r) => r.decision === 'create').length, 1);
  t.equal((await getLiveWorkspace(db, 'run-race'))?.nodeId, 'node-a');
});

t.test('a row naming no node is adopted and stamped', async (t) => {
  await createRun(db, { id: 'run-legacy', ownerUserId: 'owner-3' });
  await db.execute(
    `insert into workbench_workspace (id, run_id, node_id, owner_user_id) values ('legacy', 'run-legacy', null, 'owner-3')`,
  );
  const got = await ensureWorkspace(
    { db, nodeId: 'node-c', workbenchRoot: root, log },
    { id: 'run-legacy', ownerUserId: 'owner-3' },
  );
  t.equal(got.decision, 'adopt');
  t.equal(got.workspace.id, 'legacy', 'not replaced');
  t.equal(got.workspace.nodeId, 'node-c', 'stamped with this node');
});
