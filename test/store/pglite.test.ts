import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createRun, getRun, openDb } from '../../src/store/index.js';
import { commandEventsSuite } from './command-events-suite.js';
import { processSuite } from './process-suite.js';
import { queueFairnessSuite } from './queue-fairness-suite.js';
import { retentionSuite } from './retention-suite.js';
import { storeSuite } from './store-suite.js';
import { workerLinksSuite } from './worker-links-suite.js';

const dir = await mkdtemp(join(tmpdir(), 'memql-pglite-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));

const db = await openDb({ kind: 'pglite', dataDir: join(dir, 'db') });
t.teardown(() => db.close());
t.equal(db.kind, 'pglite');

storeSuite(t, db);
workerLinksSuite(t, db);
commandEventsSuite(t, db);
processSuite(t, db);
queueFairnessSuite(t, db);
retentionSuite(t, db);

t.test('the embedded database keeps its rows across a reopen', async (t) => {
  const other = await openDb({ kind: 'pglite', dataDir: join(dir, 'reopen') });
  await createRun(other, { id: 'kept', ownerUserId: 'u' });
  await other.close();
  const again = await openDb({ kind: 'pglite', dataDir: join(dir, 'reopen') });
  t.equal((await getRun(again, 'kept'))?.ownerUserId, 'u');
  await again.close();
});
