import t from 'tap';
import type { ExecuteCommand } from '../../src/queue/index.js';
import { ProcessRunner } from '../../src/sandbox/process-runner.js';
import { enqueueCommand, openDb } from '../../src/store/index.js';
import { makeQueue, newRun, runnerExecutor, setupDb, tempDir } from './queue-support.js';

const runner = new ProcessRunner();

t.test('two nodes on one database share the queue', async (t) => {
  const { db, url } = await setupDb(t);
  // Each node has its own connection pool, as two replicas would.
  const dbB = await openDb({ kind: 'postgres', url });
  t.teardown(() => dbB.close());
  await db.execute('create table test_run_log (command_id text not null, node text not null)');
  const dir = await tempDir(t);
  const inner = runnerExecutor(runner, dir);
  const recording =
    (node: string, q: typeof db): ExecuteCommand =>
    async (command, ctx) => {
      await q.execute('insert into test_run_log (command_id, node) values ($1, $2)', [
        command.id,
        node,
      ]);
      return inner(command, ctx);
    };

  t.test('no command runs twice and both nodes work', async (t) => {
    const run = await newRun(db);
    const a = makeQueue(t, {
      db,
      execute: recording('a', db),
      nodeId: 'node-a',
      concurrency: 3,
      pollIntervalMs: 50,
    });
    const b = makeQueue(t, {
      db: dbB,
      execute: recording('b', dbB),
      nodeId: 'node-b',
      concurrency: 3,
      pollIntervalMs: 50,
    });
    a.start();
    b.start();
    const queued = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? b : a).enqueue({
          ...run,
          request: { command: `sleep 0.1; echo ${i}` },
          timeoutMs: 20_000,
        }),
      ),
    );
    // Wait through the node that did not queue it: half the ends arrive by polling.
    const ends = await Promise.all(
      queued.map((q, i) => (i % 2 ? a : b).waitForTerminal(q.command.id)),
    );
    t.ok(
      ends.every((c) => c.status === 'completed' && c.attempts === 1),
      'all completed, each claimed once',
    );
    t.same(
      ends.map((c) => c.stdout?.toString()),
      Array.from({ length: 40 }, (_, i) => `${i}\n`),
    );
    const log = await db.query<{ command_id: string; node: string }>(
      'select command_id, node from test_run_log',
    );
    t.equal(log.length, 40, 'forty executions for forty commands');
    t.equal(new Set(log.map((r) => r.command_id)).size, 40, 'none ran twice');
    const byNode = { a: 0, b: 0 } as Record<string, number>;
    for (const r of log) byNode[r.node] = (byNode[r.node] ?? 0) + 1;
    t.ok(byNode.a! > 0 && byNode.b! > 0, `both nodes ran commands (${JSON.stringify(byNode)})`);
  });

  t.test('an enqueue wakes the local worker without waiting for a poll', async (t) => {
    const run = await newRun(db);
    const q = makeQueue(t, { db, execute: recording('a', db), pollIntervalMs: 60_000 });
    q.start();
    // Let the worker's first poll pass, so only a wake-up can start the command.
    await new Promise((r) => setTimeout(r, 200));
    const began = Date.now();
    const { command } = await q.enqueue({
      ...run,
      request: { command: 'echo hi' },
      timeoutMs: 5000,
    });
    const end = await q.waitForTerminal(command.id);
    t.equal(end.status, 'completed');
    t.ok(Date.now() - began < 3000, 'it ran long before the minute-long poll');
  });

  t.test('rows another node left behind are found by polling', async (t) => {
    const run = await newRun(db);
    const q = makeQueue(t, { db, execute: recording('a', db), pollIntervalMs: 100 });
    q.start();
    await new Promise((r) => setTimeout(r, 150));
    // Queued straight into the table: no wake-up reaches this queue.
    const { command } = await enqueueCommand(db, {
      id: 'left-behind-1',
      ...run,
      request: { command: 'echo found' },
      timeoutMs: 5000,
    });
    const end = await q.waitForTerminal(command.id);
    t.equal(end.stdout?.toString(), 'found\n');
  });
});
