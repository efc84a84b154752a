import t from 'tap';
import type { ExecuteCommand } from '../../src/queue/index.js';
import { ProcessRunner } from '../../src/sandbox/process-runner.js';
import { listAuditEvents } from '../../src/store/index.js';
import { createCommandMetrics } from '../../src/telemetry/metrics.js';
import { makeQueue, newRun, runnerExecutor, setupDb, tempDir } from './queue-support.js';

t.test(
  '50 commands against concurrency 4: never more than 4 at once, waits measured',
  async (t) => {
    const { db } = await setupDb(t);
    const run = await newRun(db);
    const dir = await tempDir(t);
    const inner = runnerExecutor(new ProcessRunner(), dir);
    let current = 0;
    let peak = 0;
    const execute: ExecuteCommand = async (command, ctx) => {
      current += 1;
      peak = Math.max(peak, current);
      try {
        return await inner(command, ctx);
      } finally {
        current -= 1;
      }
    };
    const metrics = createCommandMetrics();
    const queue = makeQueue(t, { db, execute, concurrency: 4, metrics, pollIntervalMs: 200 });
    // All 50 wait in the queue before the worker starts: it has more than it may take.
    const queued = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        queue.enqueue({
          ...run,
          request: { command: `sleep 0.1; echo n${i}` },
          timeoutMs: 20_000,
        }),
      ),
    );
    queue.start();
    t.ok(
      queued.every((q) => q.created),
      'every command is queued',
    );
    const done = await Promise.all(queued.map((q) => queue.waitForTerminal(q.command.id)));

    t.equal(peak, 4, 'the worker fills its 4 slots and never runs a fifth');
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
      'each ran once, exit 0',
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
    const waits = ends.map((e) => e.metadata.queueWaitMs);
    t.ok(
      waits.every((w) => typeof w === 'number' && w >= 0),
      'every terminal event carries queueWaitMs',
    );
    t.ok(
      Math.max(...(waits as number[])) >= 250,
      `commands behind the first four waited (longest wait ${Math.max(...(waits as number[]))} ms)`,
    );
    t.ok(
      ends.every((e) => typeof e.metadata.durationMs === 'number' && e.metadata.attempts === 1),
      'and duration and attempts',
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
