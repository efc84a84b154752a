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
  registerWorker,
  releaseHeldWorkspace,
  setWorkerStatus,
  type Workspace,
} from '../../../src/store/index.js';
import {
  decideProvision,
  type EnsureWorkspaceDeps,
  ensureWorkspace,
} from '../../../src/workbench/lifecycle/workspace-lifecycle.js';
import { createTestDatabase } from '../../support/postgres.js';

function row(nodeId: string | null): Workspace {
  const now = new Date();
  return {
    id: `ws-${nodeId}`,
    runId: 'r',
    nodeId,
    ownerUserId: 'u',
    status: 'provisioned',
    generation: 3,
    releasedReason: null,
    createdAt: now,
    updatedAt: now,
    releasedAt: null,
  };
}

t.test('decideProvision', async (t) => {
  const cases: Array<
    [string, Parameters<typeof decideProvision>, ReturnType<typeof decideProvision>['kind']]
  > = [
    ['no live row: create', [null, 'a', 'gone', 'call'], 'create'],
    ['its own row is adopted', [row('a'), 'a', 'serving', 'call'], 'adopt'],
    ['a row naming nobody is adopted', [row(null), 'a', 'gone', 'claim'], 'adopt'],
    ['a gone holder is taken over by a call', [row('b'), 'a', 'gone', 'call'], 'takeover'],
    ['a gone holder is taken over by a claim', [row('b'), 'a', 'gone', 'claim'], 'takeover'],
    [
      'a serving holder the agent could not reach is taken over',
      [row('b'), 'a', 'serving', 'call'],
      'takeover',
    ],
    ['a draining holder is waited for', [row('b'), 'a', 'draining', 'call'], 'wait'],
    ['a claim never takes from a serving holder', [row('b'), 'a', 'serving', 'claim'], 'refuse'],
    ['a claim never takes from a draining holder', [row('b'), 'a', 'draining', 'claim'], 'refuse'],
  ];
  for (const [name, args, want] of cases) t.equal(decideProvision(...args).kind, want, name);
  const lost = decideProvision(row('b'), 'a', 'gone', 'call');
  t.match(lost, { kind: 'takeover', holder: 'gone', previous: { nodeId: 'b' } });
  const unreachable = decideProvision(row('b'), 'a', 'serving', 'call');
  t.match(unreachable, { kind: 'takeover', holder: 'unreachable' });
});

const database = await createTestDatabase();
t.teardown(() => database.drop());
const db = await openDb({ kind: 'postgres', url: database.url });
t.teardown(() => db.close());
const root = await mkdtemp(join(tmpdir(), 'memql-wb-'));
t.teardown(() => rm(root, { recursive: true, force: true }));
const log = pino({ level: 'silent' });
const on = (nodeId: string, extra: Partial<EnsureWorkspaceDeps> = {}): EnsureWorkspaceDeps => ({
  db,
  nodeId,
  workbenchRoot: root,
  livenessMs: 60_000,
  handoffWaitMs: 30_000,
  handoffPollMs: 20,
  log,
  ...extra,
});

t.test('create, adopt, take over once, then adopt the successor', async (t) => {
  await createRun(db, { id: 'run-a', ownerUserId: 'owner-1' });
  const onA = on('node-a');
  const onB = on('node-b');

  const first = await ensureWorkspace(onA, { id: 'run-a', ownerUserId: 'owner-1' });
  t.equal(first.decision, 'create');
  t.equal(first.dir, join(root, 'run-a'));
  t.ok((await stat(first.dir)).isDirectory());
  t.equal((await ensureWorkspace(onA, { id: 'run-a', ownerUserId: 'owner-1' })).decision, 'adopt');

  t.equal(first.workspace.generation, 1);
  const moved = await ensureWorkspace(onB, { id: 'run-a', ownerUserId: 'owner-1' });
  t.equal(moved.decision, 'takeover', 'node-a has no live worker: it is gone');
  t.equal(moved.previous?.nodeId, 'node-a');
  t.equal(moved.workspace.nodeId, 'node-b');
  t.equal(moved.workspace.generation, 2, 'the successor holds the next generation');
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
  const deps = on('node-a');
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
  const got = await ensureWorkspace(on('node-c'), { id: 'run-legacy', ownerUserId: 'owner-3' });
  t.equal(got.decision, 'adopt');
  t.equal(got.workspace.id, 'legacy', 'not replaced');
  t.equal(got.workspace.nodeId, 'node-c', 'stamped with this node');
});

t.test('a draining holder is waited for, and its handoff is no loss', async (t) => {
  await createRun(db, { id: 'run-drain', ownerUserId: 'owner-4' });
  await registerWorker(db, { leaseOwner: 'node-d/1', nodeId: 'node-d' });
  const held = await ensureWorkspace(on('node-d'), { id: 'run-drain', ownerUserId: 'owner-4' });
  await setWorkerStatus(db, 'node-d/1', 'draining');

  // A claimed command never takes a live node's workspace.
  await t.rejects(
    ensureWorkspace(on('node-e'), { id: 'run-drain', ownerUserId: 'owner-4' }, 'claim'),
    {
      code: 'unavailable',
      payload: { reason: 'workspace_moved', holderNodeId: 'node-d' },
    },
  );

  const waiting = ensureWorkspace(on('node-e'), { id: 'run-drain', ownerUserId: 'owner-4' });
  let settled = false;
  const mark = () => {
    settled = true;
  };
  void waiting.then(mark, mark);
  // The waiter polls the row; the holder hands the workspace off when it is idle.
  const live = await getLiveWorkspace(db, 'run-drain');
  t.equal(live?.nodeId, 'node-d', 'still held while the holder drains');
  t.notOk(settled, 'the caller is still waiting for the handoff');
  t.ok(
    await releaseHeldWorkspace(
      db,
      { id: held.workspace.id, nodeId: 'node-d', generation: held.workspace.generation },
      'handed_off',
    ),
  );
  const got = await waiting;
  t.equal(got.decision, 'create', 'a successor after the handoff, not a takeover');
  t.equal(got.workspace.generation, held.workspace.generation + 1);
  const rows = await listWorkspacesForOwner(db, 'owner-4', { includeReleased: true });
  t.same(rows.map((w) => [w.nodeId, w.status, w.releasedReason]).sort(), [
    ['node-d', 'released', 'handed_off'],
    ['node-e', 'provisioned', null],
  ]);
  t.notOk(
    rows.some((w) => w.releasedReason === 'node_lost'),
    'no node_lost for a node that drained',
  );
});

t.test('a holder that drains and never hands off: the wait ends unavailable', async (t) => {
  await createRun(db, { id: 'run-stuck', ownerUserId: 'owner-5' });
  await registerWorker(db, { leaseOwner: 'node-f/1', nodeId: 'node-f' });
  await ensureWorkspace(on('node-f'), { id: 'run-stuck', ownerUserId: 'owner-5' });
  await setWorkerStatus(db, 'node-f/1', 'draining');
  await t.rejects(
    ensureWorkspace(on('node-g', { handoffWaitMs: 200 }), {
      id: 'run-stuck',
      ownerUserId: 'owner-5',
    }),
    { code: 'unavailable', payload: { reason: 'workspace_handoff', holderNodeId: 'node-f' } },
  );
  t.equal((await getLiveWorkspace(db, 'run-stuck'))?.nodeId, 'node-f', 'nothing was taken');

  // Once it stops (or goes silent) it is gone, and the workspace is taken over.
  await setWorkerStatus(db, 'node-f/1', 'stopped');
  const got = await ensureWorkspace(on('node-g'), { id: 'run-stuck', ownerUserId: 'owner-5' });
  t.equal(got.decision, 'takeover');
});
