import t from 'tap';
import type { ExecuteCommand } from '../../src/queue/index.js';
import {
  claimNextCommand,
  enqueueCommand,
  finishAndClaim,
  listAuditEvents,
} from '../../src/store/index.js';
import { emptyRun, makeQueue, newRun, setupDb, watchedDb } from './queue-support.js';

/**
 * A worker with commands waiting moves from one to the next in one statement: the
 * finish of a command claims the next for its slot, with both events. Real Postgres.
 */

t.test('a finish claims the next queued command, events in order', async (t) => {
  const { db } = await setupDb(t);
  const run = await newRun(db);
  const queue = (id: string) =>
    enqueueCommand(db, { ...run, id, request: { command: 'x' }, timeoutMs: 5000 });
  await queue('c1');
  await queue('c2');
  const first = await claimNextCommand(db, 'worker-1', 5000);
  t.equal(first?.id, 'c1');
  const next = { limit: 1, leaseMs: 5000 };
  const one = await finishAndClaim(
    db,
    'c1',
    'worker-1',
    { status: 'completed', exitCode: 0 },
    next,
  );
  t.match(one.row, { id: 'c1', status: 'completed' });
  t.match(one.claimed, [{ id: 'c2', status: 'running', leaseOwner: 'worker-1', attempts: 1 }]);
  const byOther = await finishAndClaim(db, 'c2', 'worker-2', { status: 'completed' }, next);
  t.equal(byOther.row, null, 'the finish keeps its compare-and-set');
  t.same(byOther.claimed, [], 'and nothing is left to claim');
  const events = (await listAuditEvents(db, { runId: run.runId })).map(
    (e) => `${e.commandId} ${e.eventType.replace('workspace_command.', '')}`,
  );
  t.same(events, ['c1 queued', 'c2 queued', 'c1 running', 'c1 completed', 'c2 running']);
});

t.test('a busy worker claims once, then moves on with each finish', async (t) => {
  const { db } = await setupDb(t);
  const run = await newRun(db);
  const claims: string[] = [];
  const watched = watchedDb(db, (sql) => {
    const s = sql.replace(/\s+/g, ' ').trim();
    if (s.startsWith('with picked')) claims.push('claim');
    else if (s.startsWith('with finished') && s.includes('picked as')) claims.push('finish+claim');
  });
  const order: string[] = [];
  const execute: ExecuteCommand = async (command) => {
    order.push(command.id);
    return emptyRun();
  };
  const q = makeQueue(t, { db: watched, execute, concurrency: 1, pollIntervalMs: 3_600_000 });
  const ids = ['a', 'b', 'c', 'd'];
  for (const id of ids) {
    await q.enqueue({ ...run, id, request: { command: id }, timeoutMs: 5000 });
  }
  q.start();
  for (const id of ids) await q.waitForTerminal(id);
  t.same(order, ids, 'in queue order, one at a time');
  t.equal(claims.filter((c) => c === 'claim').length, 1, `one claim statement: ${claims}`);
  t.ok(claims.filter((c) => c === 'finish+claim').length >= 3, 'each finish took the next');
});
