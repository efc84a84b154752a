import t from 'tap';
import type { ExecuteCommand } from '../../src/queue/index.js';
import { ProcessRunner } from '../../src/sandbox/process-runner.js';
import { enqueueCommand, openDb } from '../../src/store/index.js';
import {
  eventually,
  isClaim,
  makeQueue,
  newRun,
  runnerExecutor,
  setupDb,
  tempDir,
  watchedDb,
} from './queue-support.js';

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
    (node: string, q: typeof db, before?: (signal: AbortSignal) => Promise<void>): ExecuteCommand =>
    async (command, ctx) => {
      await q.execute('insert into test_run_log (command_id, node) values ($1, $2)', [
        command.id,
        node,
      ]);
      await before?.(ctx.signal);
      return inner(command, ctx);
    };

  t.test('no command runs twice and both nodes work', async (t) => {
    const run = await newRun(db);
    // Commands wait in the executor until both nodes have started one: neither node can
    // finish the queue alone, however slowly the other one gets going.
    const startedOn = new Set<string>();
    let bothStarted: () => void = () => {};
    const both = new Promise<void>((resolve) => {
      bothStarted = resolve;
    });
    const untilBoth = (node: string) => (signal: AbortSignal) => {
      startedOn.add(node);
      if (startedOn.size === 2) bothStarted();
      return Promise.race([
        both,
        new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve())),
      ]);
    };
    const a = makeQueue(t, {
      db,
      execute: recording('a', db, untilBoth('a')),
      nodeId: 'node-a',
      concurrency: 3,
      pollIntervalMs: 50,
    });
    const b = makeQueue(t, {
      db: dbB,
      execute: recording('b', dbB, untilBoth('b')),
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
          request: { command: `echo ${i}` },
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
    let claims = 0;
    const watched = watchedDb(db, (sql) => {
      if (isClaim(sql)) claims += 1;
    });
    // A poll every ~23 days: within the test only a wake-up can start the command (and
    // the wait below is answered by this node's own notice, not by polling).
    const q = makeQueue(t, {
      db: watched,
      execute: recording('a', db),
      pollIntervalMs: 2_000_000_000,
    });
    q.start();
    // The worker's first claim has found nothing: only a wake-up can start the command.
    await eventually(async () => (claims > 0 ? true : undefined), 30_000, 'the first claim');
    const { command } = await q.enqueue({
      ...run,
      request: { command: 'echo hi' },
      timeoutMs: 5000,
    });
    const end = await q.waitForTerminal(command.id);
    t.equal(end.status, 'completed');
    t.equal(end.stdout?.toString(), 'hi\n');
    // A caller holding the row as it was queued, arriving after this node ended it, is
    // answered by a read of the row (it missed the notice, and no poll comes).
    const late = await q.waitForTerminal(command.id, { row: command });
    t.equal(late.status, 'completed');
  });

  t.test('a command queued through another node wakes an idle worker by NOTIFY', async (t) => {
    const run = await newRun(db);
    let claims = 0;
    let listening = false;
    const watched = watchedDb(dbB, (sql) => {
      if (isClaim(sql)) claims += 1;
      if (sql === 'listen memql_command_queued') listening = true;
    });
    // A poll every ~23 days: within the test only a notice can start the command.
    const b = makeQueue(t, {
      db: watched,
      execute: recording('b', dbB),
      nodeId: 'node-b',
      pollIntervalMs: 2_000_000_000,
    });
    // Never started: its enqueue wakes no worker of its own.
    const a = makeQueue(t, { db, execute: recording('a', db), nodeId: 'node-a' });
    b.start();
    await eventually(
      async () => (claims > 0 && listening ? true : undefined),
      30_000,
      'the first claim and the listen',
    );
    const { command } = await a.enqueue({
      ...run,
      request: { command: 'echo woken' },
      timeoutMs: 5000,
    });
    // Node-b runs it, so its own in-process notice answers this wait.
    const end = await b.waitForTerminal(command.id);
    t.equal(end.stdout?.toString(), 'woken\n');
    const log = await db.query<{ node: string }>(
      'select node from test_run_log where command_id = $1',
      [command.id],
    );
    t.same(
      log.map((r) => r.node),
      ['b'],
    );
  });

  t.test('rows another node left behind are found by polling', async (t) => {
    const run = await newRun(db);
    let claims = 0;
    const watched = watchedDb(db, (sql) => {
      if (isClaim(sql)) claims += 1;
    });
    const q = makeQueue(t, { db: watched, execute: recording('a', db), pollIntervalMs: 100 });
    q.start();
    // Insert after the worker's first claim found nothing, so a later poll must find it.
    await eventually(async () => (claims > 0 ? true : undefined), 30_000, 'the first claim');
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
