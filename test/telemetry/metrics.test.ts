import t from 'tap';
import { ProcessRunner } from '../../src/sandbox/process-runner.js';
import { countLiveCommands } from '../../src/store/index.js';
import { createCommandMetrics, startMetricsServer } from '../../src/telemetry/metrics.js';
import { makeQueue, newRun, runnerExecutor, setupDb, tempDir } from '../queue/queue-support.js';

t.test('GET /metrics serves queue depth, wait, duration and terminal counts', async (t) => {
  const { db } = await setupDb(t);
  const run = await newRun(db);
  const dir = await tempDir(t);
  const metrics = createCommandMetrics({ liveCounts: () => countLiveCommands(db) });
  const server = await startMetricsServer(metrics.registry, { host: '127.0.0.1', port: 0 });
  t.teardown(() => server.close());
  const queue = makeQueue(t, {
    db,
    metrics,
    execute: runnerExecutor(new ProcessRunner(), dir),
  });
  queue.start();
  const done = await Promise.all(
    ['exit 0', 'exit 1', 'sleep 0.1'].map(async (command) => {
      const { command: c } = await queue.enqueue({ ...run, request: { command }, timeoutMs: 5000 });
      return queue.waitForTerminal(c.id);
    }),
  );
  t.same(
    done.map((c) => c.status),
    ['completed', 'completed', 'completed'],
  );
  const timedOut = await queue.enqueue({ ...run, request: { command: 'sleep 5' }, timeoutMs: 200 });
  await queue.waitForTerminal(timedOut.command.id);
  await queue.stop({ graceMs: 1000 });
  // Two left queued: no worker runs now, so the gauge must read them from the table.
  for (const command of ['echo a', 'echo b']) {
    await queue.enqueue({ ...run, request: { command }, timeoutMs: 5000 });
  }

  const res = await fetch(`${server.url}/metrics`);
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type') ?? '', 'text/plain');
  const body = await res.text();
  const series = (name: string) => {
    const line = body.split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? undefined : Number(line.slice(name.length + 1));
  };
  t.equal(series('memql_workspace_command_queue_depth{state="queued"}'), 2);
  t.equal(series('memql_workspace_command_queue_depth{state="running"}'), 0);
  t.equal(series('memql_workspace_command_queue_depth{state="cancelling"}'), 0);
  t.equal(series('memql_workspace_command_queue_wait_seconds_count'), 4);
  t.equal(series('memql_workspace_command_duration_seconds_count{status="completed"}'), 3);
  t.equal(series('memql_workspace_command_duration_seconds_count{status="timed_out"}'), 1);
  t.ok((series('memql_workspace_command_duration_seconds_sum{status="completed"}') ?? 0) > 0.05);
  t.equal(
    series('memql_workspace_commands_terminal_total{status="completed",error_category="none"}'),
    3,
  );
  t.equal(
    series(
      'memql_workspace_commands_terminal_total{status="timed_out",error_category="command_timeout"}',
    ),
    1,
  );
  t.equal(series('memql_workspace_commands_queued_total'), 6);

  const missing = await fetch(`${server.url}/other`);
  t.equal(missing.status, 404);
  await missing.text();
});

t.test('each node has its own registry', async (t) => {
  const a = createCommandMetrics();
  const b = createCommandMetrics();
  a.queued();
  t.match(await a.registry.metrics(), 'memql_workspace_commands_queued_total 1');
  t.match(await b.registry.metrics(), 'memql_workspace_commands_queued_total 0');
});

t.test('a closed metrics server stops answering', async (t) => {
  const server = await startMetricsServer(createCommandMetrics().registry, {
    host: '127.0.0.1',
    port: 0,
  });
  await server.close();
  await t.rejects(fetch(`${server.url}/metrics`));
});
