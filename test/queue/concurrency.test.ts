import t from 'tap';
import { queueWaitMs } from '../../src/queue/command-audit.js';
import type { ExecuteCommand } from '../../src/queue/index.js';
import { ProcessRunner } from '../../src/sandbox/process-runner.js';
import { type Command, listAuditEvents } from '../../src/store/index.js';
import { createCommandMetrics } from '../../src/telemetry/metrics.js';
import {
  emptyRun,
  eventually,
  isClaim,
  makeQueue,
  newRun,
  runnerExecutor,
  setupDb,
  tempDir,
  watchedDb,
} from './queue-support.js';

t.test(
  '50 commands against concurrency 4: all 4 slots used, never a fifth, each runs once, waits measured',
  async (t) => {
    const { db } = await setupDb(t);
    const run = await newRun(db);
    const dir = await tempDir(t);
    const inner = runnerExecutor(new ProcessRunner(), dir);

    // Every command blocks in the executor until the test releases it (or opens the gate
    // for all), so how many run at once is decided by the queue, not by how fast they end.
    let current = 0;
    let peak = 0;
    /** Command ids in the order the executor was handed them. */
    const started: string[] = [];
    const held = new Map<string, () => void>();
    let gateOpen = false;
    const execute: ExecuteCommand = async (command, ctx) => {
      current += 1;
      peak = Math.max(peak, current);
      started.push(command.id);
      try {
        if (!gateOpen) {
          await new Promise<void>((release) => {
            held.set(command.id, release);
            ctx.signal.addEventListener('abort', () => release(), { once: true });
          });
          held.delete(command.id);
        }
        return await inner(command, ctx);
      } finally {
        current -= 1;
      }
    };
    const release = (commandId: string) => held.get(commandId)?.();

    const metrics = createCommandMetrics();
    const queue = makeQueue(t, { db, execute, concurrency: 4, metrics, pollIntervalMs: 200 });
    // All 50 wait in the queue before the worker starts: it has more than it may take.
    const queued = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        queue.enqueue({ ...run, request: { command: `echo n${i}` }, timeoutMs: 20_000 }),
      ),
    );
    t.ok(
      queued.every((q) => q.created),
      'every command is queued',
    );
    const ids = queued.map((q) => q.command.id);
    const rows = async () => {
      const all = await Promise.all(ids.map((id) => queue.get(id)));
      return all.filter((c): c is Command => c !== null);
    };
    const withStatus = (list: Command[], status: string) =>
      list.filter((c) => c.status === status).map((c) => c.id);

    queue.start();

    // All four slots fill, and while their commands are held nothing else is started.
    await eventually(async () => (held.size >= 4 ? true : undefined), 30_000, '4 running');
    const firstFour = [...started];
    t.equal(firstFour.length, 4, 'the executor was handed exactly 4 commands');
    t.equal(current, 4, 'all 4 are in the executor at once');
    t.same(queue.runningHere().sort(), [...firstFour].sort(), 'the queue runs those 4');
    const whileHeld = await rows();
    t.same(withStatus(whileHeld, 'running').sort(), [...firstFour].sort(), 'the database agrees');
    t.equal(withStatus(whileHeld, 'queued').length, 46, 'the other 46 are still queued');

    // Freeing one slot lets exactly one more start, and only after the freed one ended.
    const freed = firstFour[0]!;
    release(freed);
    await eventually(async () => (started.length >= 5 ? true : undefined), 30_000, 'a fifth');
    const fifth = started[4]!;
    t.equal(current, 4, 'the fifth started into the freed slot: still 4 at once');
    t.same(queue.runningHere().sort(), [...firstFour.slice(1), fifth].sort());
    const afterOne = await rows();
    t.same(withStatus(afterOne, 'completed'), [freed], 'the freed command had ended');
    t.equal(withStatus(afterOne, 'running').length, 4);
    t.equal(withStatus(afterOne, 'queued').length, 45);

    // Now let everything through.
    gateOpen = true;
    for (const id of [...held.keys()]) release(id);
    const done = await Promise.all(ids.map((id) => queue.waitForTerminal(id)));

    t.equal(peak, 4, 'the worker filled its 4 slots and never ran a fifth at once');
    t.equal(started.length, 50, 'the executor was handed 50 commands');
    t.same([...started].sort(), [...ids].sort(), 'each command exactly once');
    t.same(
      done.map((c) => c.status),
      Array(50).fill('completed'),
    );
    t.same(
      done.map((c) => c.stdout?.toString()),
      Array.from({ length: 50 }, (_, i) => `n${i}\n`),
      'each command ran its own text and kept its output',
    );
    t.ok(
      done.every((c) => c.attempts === 1 && c.exitCode === 0),
      'each was claimed once, exit 0',
    );

    const events = await listAuditEvents(db, { runId: run.runId, limit: 1000 });
    for (const c of done) {
      t.same(
        events.filter((e) => e.commandId === c.id).map((e) => e.eventType),
        ['workspace_command.queued', 'workspace_command.running', 'workspace_command.completed'],
      );
    }
    const ends = events.filter((e) => e.eventType === 'workspace_command.completed');
    t.equal(ends.length, 50);
    const byId = new Map(done.map((c) => [c.id, c]));
    t.ok(
      ends.every((e) => {
        const row = byId.get(e.commandId ?? '');
        return row !== undefined && e.metadata.queueWaitMs === queueWaitMs(row);
      }),
      'every terminal event carries queueWaitMs: from queued to claimed',
    );
    t.ok(
      ends.every((e) => typeof e.metadata.durationMs === 'number' && e.metadata.attempts === 1),
      'and duration and attempts',
    );
    // The fifth could only be claimed once the freed command had ended, so its measured
    // wait covers at least the time from its enqueue to that end (both database clock).
    const fifthRow = byId.get(fifth)!;
    const freedRow = byId.get(freed)!;
    t.ok(
      fifthRow.startedAt!.getTime() >= freedRow.finishedAt!.getTime(),
      'the fifth was claimed after the freed command ended',
    );
    t.ok(
      queueWaitMs(fifthRow)! >= freedRow.finishedAt!.getTime() - fifthRow.queuedAt.getTime(),
      `the fifth's wait (${queueWaitMs(fifthRow)} ms) covers its time behind the full worker`,
    );

    const json = await metrics.registry.getMetricsAsJSON();
    const wait = json.find((m) => m.name === 'memql_workspace_command_queue_wait_seconds');
    const count = wait?.values.find(
      (v) =>
        (v as { metricName?: string }).metricName ===
        'memql_workspace_command_queue_wait_seconds_count',
    );
    t.equal(count?.value, 50, 'the queue wait histogram saw all 50');
  },
);

t.test('a claim fills every free slot in one statement, with one running event each', async (t) => {
  const { db } = await setupDb(t);
  const run = await newRun(db);
  let claims = 0;
  const watched = watchedDb(db, (sql) => {
    if (isClaim(sql)) claims += 1;
  });
  const started = new Set<string>();
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const queue = makeQueue(t, {
    db: watched,
    concurrency: 6,
    pollIntervalMs: 2_000_000_000,
    execute: async (command, ctx) => {
      started.add(command.id);
      await Promise.race([
        gate,
        new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true })),
      ]);
      return emptyRun();
    },
  });
  // Six wait in the queue before the worker starts, one for each of its slots.
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) {
    ids.push((await queue.enqueue({ ...run, request: { n: i }, timeoutMs: 20_000 })).command.id);
  }
  queue.start();
  await eventually(async () => (started.size === 6 ? true : undefined), 30_000, '6 running');
  t.equal(claims, 1, 'one claim statement took all six');
  const running = (await listAuditEvents(db, { runId: run.runId }))
    .filter((e) => e.eventType === 'workspace_command.running')
    .map((e) => e.commandId);
  t.same(running, ids, 'a running event for each, in queue order');
  release();
  const done = await Promise.all(ids.map((id) => queue.waitForTerminal(id)));
  t.ok(done.every((c) => c.status === 'completed'));
});
