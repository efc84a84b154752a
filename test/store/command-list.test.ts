import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import {
  claimNextCommand,
  createRun,
  type Db,
  enqueueCommand,
  finishCommand,
  listRunCommands,
  openDb,
} from '../../src/store/index.js';
import { createTestDatabase } from '../support/postgres.js';

/** `listRunCommands` on both drivers: order, ties, status, the `before` cursor, no output. */

async function suite(t: Test, db: Db) {
  await createRun(db, { id: 'run-list', ownerUserId: 'u' });
  await createRun(db, { id: 'run-other', ownerUserId: 'u' });
  const ids = ['c-b', 'c-d', 'c-a', 'c-c', 'c-e'];
  for (const id of ids) {
    await enqueueCommand(db, {
      id,
      runId: 'run-list',
      ownerUserId: 'u',
      callId: `call-${id}`,
      request: { command: 'secret text' },
      timeoutMs: 1000,
    });
  }
  // c-b, c-d and c-a in one instant; c-c and c-e a second later.
  await db.execute(
    `update workspace_command set queued_at = case
       when id in ('c-b', 'c-d', 'c-a') then timestamptz '2030-01-01 00:00:00.000001+00'
       else timestamptz '2030-01-01 00:00:01+00' end
     where run_id = 'run-list'`,
  );
  const claimed = await claimNextCommand(db, 'worker-1', 60_000);
  t.ok(claimed && ids.includes(claimed.id), 'one is running');
  await finishCommand(db, claimed!.id, 'worker-1', {
    status: 'completed',
    exitCode: 0,
    stdout: Buffer.from('out'),
  });
  const running = await claimNextCommand(db, 'worker-1', 60_000);
  await enqueueCommand(db, {
    id: 'c-z',
    runId: 'run-other',
    ownerUserId: 'u',
    request: {},
    timeoutMs: 1000,
  });

  const all = await listRunCommands(db, 'run-list', { limit: 10 });
  t.same(
    all.map((c) => c.id),
    ['c-e', 'c-c', 'c-d', 'c-b', 'c-a'],
    'newest first; ties by id, descending',
  );
  const done = all.find((c) => c.id === claimed!.id)!;
  t.match(done, { status: 'completed', exitCode: 0, callId: `call-${claimed!.id}`, attempts: 1 });
  t.notOk('stdout' in done || 'stderr' in done || 'request' in done, 'no output, no request');

  t.same(
    (await listRunCommands(db, 'run-list', { limit: 2 })).map((c) => c.id),
    ['c-e', 'c-c'],
  );
  t.same(
    (await listRunCommands(db, 'run-list', { limit: 2, before: 'c-c' })).map((c) => c.id),
    ['c-d', 'c-b'],
    'after a page boundary between instants',
  );
  t.same(
    (await listRunCommands(db, 'run-list', { limit: 2, before: 'c-d' })).map((c) => c.id),
    ['c-b', 'c-a'],
    'after a page boundary inside one instant',
  );
  t.same(await listRunCommands(db, 'run-list', { limit: 2, before: 'c-a' }), []);
  t.same(
    await listRunCommands(db, 'run-list', { limit: 2, before: 'c-z' }),
    [],
    "another run's command lists nothing",
  );
  t.same(await listRunCommands(db, 'run-list', { limit: 2, before: 'nope' }), []);

  t.same(
    (await listRunCommands(db, 'run-list', { limit: 10, status: 'running' })).map((c) => c.id),
    [running!.id],
  );
  t.equal(
    (await listRunCommands(db, 'run-list', { limit: 10, status: 'queued' })).length,
    3,
    'the rest are queued',
  );
  t.same(
    (await listRunCommands(db, 'run-other', { limit: 10 })).map((c) => c.id),
    ['c-z'],
  );
}

t.test('postgres', async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const db = await openDb({ kind: 'postgres', url: database.url });
  t.teardown(() => db.close());
  await suite(t, db);
});

t.test('pglite', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'memql-command-list-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const db = await openDb({ kind: 'pglite', dataDir: join(dir, 'db') });
  t.teardown(() => db.close());
  await suite(t, db);
});
