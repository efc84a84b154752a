import t from 'tap';
import { createCommandTelemetry } from '../../src/queue/command-telemetry.js';
import type { Command } from '../../src/store/commands.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { createCommandMetrics } from '../../src/telemetry/metrics.js';
import { captureLog, eventually } from '../queue/queue-support.js';

const base: Command = {
  id: 'cmd-1',
  runId: 'run-1',
  workspaceId: 'ws-1',
  ownerUserId: 'user-1',
  conversationId: null,
  callId: null,
  status: 'timed_out',
  request: { command: 'sleep 100' },
  execRequest: { command: 'sleep 100' },
  timeoutMs: 100,
  attempts: 1,
  leaseOwner: null,
  leaseExpiresAt: null,
  cancelRequested: false,
  exitCode: null,
  errorCode: null,
  errorCategory: 'command_timeout',
  stdout: Buffer.from('partial'),
  stderr: null,
  stdoutTruncated: false,
  stderrTruncated: false,
  signal: 'SIGKILL',
  oomKilled: false,
  execDurationMs: 101,
  queuedAt: new Date(1000),
  queuePlace: new Date(1000),
  startedAt: new Date(1200),
  finishedAt: new Date(1400),
};

t.test('a move is one log line with the live counts, and the matching metrics', async (t) => {
  const captured = captureLog();
  const metrics = createCommandMetrics();
  let reads = 0;
  const telemetry = createCommandTelemetry({
    log: captured.log,
    metrics,
    liveCounts: async () => {
      reads += 1;
      return { queued: 7, running: 3, cancelling: 1 };
    },
    // Counts read in this test stay fresh for its whole length.
    liveCountsMaxAgeMs: 600_000,
  });
  // No counts were read yet: the first line goes out without them, and starts a read.
  await telemetry.moved('workspace_command.running', { ...base, status: 'running' });
  await telemetry.moved('workspace_command.timed_out', base);
  await telemetry.moved('workspace_command.timed_out', base);
  telemetry.tempCleanup({ removed: 4, failed: 1 });
  captured.log.flush();
  const [first, line, third, cleanup] = captured.lines();
  t.match(first, { event: 'workspace_command.running', commandId: 'cmd-1' });
  t.notOk('queued' in (first ?? {}), 'no counts before the first read');
  t.match(line, {
    event: 'workspace_command.timed_out',
    commandId: 'cmd-1',
    status: 'timed_out',
    timeoutCategory: 'command_timeout',
    durationMs: 200,
    queueWaitMs: 200,
    stdoutBytes: 7,
    queued: 7,
    running: 3,
    cancelling: 1,
    component: 'command-queue',
  });
  t.match(third, { queued: 7 });
  t.equal(reads, 1, 'moves read the counts once per max age, not once per move');
  t.notOk('request' in (line ?? {}), 'no request on the line');
  t.notMatch(captured.text(), 'sleep 100');
  t.notMatch(captured.text(), 'partial');
  t.match(cleanup, { event: 'workspace_command.temp_cleanup', removed: 4, failed: 1 });
  const text = await metrics.registry.metrics();
  t.match(text, 'memql_workspace_command_queue_depth{state="queued"} 7');
  t.match(
    text,
    'memql_workspace_commands_terminal_total{status="timed_out",error_category="command_timeout"} 2',
  );
  t.match(text, 'memql_workspace_command_duration_seconds_count{status="timed_out"} 2');
});

t.test('counts older than the max age are read again', async (t) => {
  const captured = captureLog();
  let reads = 0;
  const telemetry = createCommandTelemetry({
    log: captured.log,
    metrics: createCommandMetrics(),
    liveCounts: async () => {
      reads += 1;
      return { queued: reads, running: 0, cancelling: 0 };
    },
    liveCountsMaxAgeMs: 0,
  });
  const queued = { ...base, status: 'queued' as const, startedAt: null, finishedAt: null };
  await telemetry.moved('workspace_command.queued', queued);
  await eventually(async () => {
    await telemetry.moved('workspace_command.queued', queued);
    return reads >= 2 ? true : undefined;
  });
  t.ok(reads >= 2, 'stale counts start another read');
});

t.test('a failing count read still logs the move', async (t) => {
  const captured = captureLog();
  const telemetry = createCommandTelemetry({
    log: captured.log,
    metrics: createCommandMetrics(),
    liveCounts: () => Promise.reject(new Error('db down')),
  });
  await telemetry.moved('workspace_command.queued', {
    ...base,
    status: 'queued',
    startedAt: null,
    finishedAt: null,
  });
  captured.log.flush();
  const [line] = captured.lines();
  t.match(line, { event: 'workspace_command.queued', commandId: 'cmd-1' });
  t.notOk('queued' in (line ?? {}));
});

t.test('a terminal line follows the waiters; a queued line claimed at once is debug', async (t) => {
  // A destination that keeps each line as it is written, with no stream in between.
  const written: Record<string, unknown>[] = [];
  const log = createLogger({
    nodeId: 'node-test',
    nodeType: 'workbench',
    level: 'debug',
    destination: { write: (line: string) => void written.push(JSON.parse(line)) },
  });
  const telemetry = createCommandTelemetry({
    log,
    metrics: createCommandMetrics(),
    liveCounts: async () => ({ queued: 0, running: 0, cancelling: 0 }),
  });
  const queued = { ...base, status: 'queued' as const, startedAt: null, finishedAt: null };
  await telemetry.moved('workspace_command.queued', queued, { claimedAtEnqueue: true });
  await telemetry.moved('workspace_command.queued', queued);
  t.same(
    written.map((l) => l.level),
    [20, 30],
    'claimed in its enqueue: debug; left waiting: info',
  );

  const done: Command = {
    ...base,
    status: 'completed',
    errorCategory: null,
    exitCode: 0,
    signal: null,
  };
  const moved = telemetry.moved('workspace_command.completed', done);
  // The queue tells the waiters as soon as this returns: nothing is written before them.
  t.equal(written.length, 2, 'no line yet when the call returns');
  await moved;
  t.equal(written.length, 3, 'written once the promise resolves');
  t.match(written[2], { event: 'workspace_command.completed', level: 30, exitCode: 0 });
});
