import t from 'tap';
import {
  createRun,
  enqueueCommand,
  listenForQueuedCommands,
  loadMigrations,
  migrate,
  openDb,
  provisionWorkspace,
  type QueuedNotice,
} from '../../src/store/index.js';
import { openPostgres } from '../../src/store/postgres-driver.js';
import { eventually } from '../queue/queue-support.js';
import { createTestDatabase } from '../support/postgres.js';
import { commandEventsSuite } from './command-events-suite.js';
import { processSuite } from './process-suite.js';
import { queueFairnessSuite } from './queue-fairness-suite.js';
import { retentionSuite } from './retention-suite.js';
import { storeSuite } from './store-suite.js';
import { workerLinksSuite } from './worker-links-suite.js';

const database = await createTestDatabase();
t.teardown(() => database.drop());
const db = await openDb({ kind: 'postgres', url: database.url });
t.teardown(() => db.close());
t.equal(db.kind, 'postgres');

storeSuite(t, db);
workerLinksSuite(t, db);
commandEventsSuite(t, db);
processSuite(t, db);
queueFairnessSuite(t, db);
retentionSuite(t, db);

t.test('two nodes migrating at once apply each migration exactly once', async (t) => {
  const fresh = await createTestDatabase();
  const a = openPostgres({ url: fresh.url });
  const b = openPostgres({ url: fresh.url });
  try {
    const [ra, rb] = await Promise.all([migrate(a), migrate(b)]);
    const all = (await loadMigrations()).map((m) => m.version);
    t.same(
      [...ra, ...rb].sort((x, y) => x - y),
      all,
      'each migration was applied by exactly one of them',
    );
    const rows = await a.query('select version from memql_schema_migration');
    t.equal(rows.length, all.length);
  } finally {
    await a.close();
    await b.close();
    await fresh.drop();
  }
});

t.test('an unreachable server is reported as unavailable', async (t) => {
  const dead = openPostgres({
    url: 'postgres://postgres@127.0.0.1:1/none',
    connectTimeoutSeconds: 2,
  });
  await t.rejects(dead.query('select 1'), { code: 'unavailable' });
  await dead.close();
});

t.test(
  'an enqueue notifies listeners on other connections, unless its node holds the run',
  async (t) => {
    const other = openPostgres({ url: database.url });
    t.teardown(() => other.close());
    const notices: QueuedNotice[] = [];
    const subscription = await listenForQueuedCommands(other, (n) => notices.push(n));
    t.teardown(() => subscription?.close());
    const held = await createRun(db, { id: 'notify-held', ownerUserId: 'u' });
    await provisionWorkspace(db, { runId: held.id, nodeId: 'node-a', ownerUserId: 'u' });
    const free = await createRun(db, { id: 'notify-free', ownerUserId: 'u' });
    const enqueue = (runId: string, id: string, nodeId: string) =>
      enqueueCommand(
        db,
        { id, runId, ownerUserId: 'u', request: {}, timeoutMs: 1000 },
        { notify: { sender: `${nodeId}/q1`, nodeId } },
      );
    // Notices arrive in commit order, so once the last one is in, the others are too.
    await enqueue(held.id, 'notify-1', 'node-a');
    await enqueue(held.id, 'notify-2', 'node-c');
    await enqueue(free.id, 'notify-3', 'node-a');
    await eventually(async () => (notices.length >= 2 ? true : undefined), 10_000, 'notices');
    t.same(notices, [
      { sender: 'node-c/q1', holder: 'node-a' },
      { sender: 'node-a/q1', holder: null },
    ]);
  },
);
