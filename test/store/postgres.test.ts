import t from 'tap';
import { loadMigrations, migrate, openDb } from '../../src/store/index.js';
import { openPostgres } from '../../src/store/postgres-driver.js';
import { createTestDatabase } from '../support/postgres.js';
import { storeSuite } from './store-suite.js';

const database = await createTestDatabase();
t.teardown(() => database.drop());
const db = await openDb({ kind: 'postgres', url: database.url });
t.teardown(() => db.close());
t.equal(db.kind, 'postgres');

storeSuite(t, db);

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
