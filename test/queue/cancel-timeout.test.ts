import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { WorkbenchError } from '../../src/contract/errors.js';
import type { ExecuteCommand } from '../../src/queue/index.js';
import { ProcessRunner } from '../../src/sandbox/process-runner.js';
import { listAuditEvents } from '../../src/store/index.js';
import { killAll, leftovers, markedSleep } from '../sandbox/sandbox-support.js';
import {
  captureLog,
  eventTypes,
  eventually,
  makeQueue,
  newRun,
  runnerExecutor,
  setupDb,
  tempDir,
} from './queue-support.js';

const runner = new ProcessRunner();

t.test('queue behaviour with real commands', async (t) => {
  const { db } = await setupDb(t);
  const dir = await tempDir(t);
  const inner = runnerExecutor(runner, dir);
  /** Ids this node's executor was handed, in order. */
  const ran: string[] = [];
  const execute: ExecuteCommand = (command, ctx) => {
    ran.push(command.id);
    return inner(command, ctx);
  };

  t.test('cancel a queued command (it never runs) and a running one (killed)', async (t) => {
    const run = await newRun(db);
    const queue = makeQueue(t, { db, execute, concurrency: 1 });
    queue.start();
    const marker = markedSleep(30);
    t.teardown(async () => killAll(await leftovers(marker, 0)));
    const blocker = await queue.enqueue({
      ...run,
      request: { command: `echo started; exec sleep ${marker}` },
      timeoutMs: 60_000,
    });
    const output: string[] = [];
    const blockerEnd = queue.waitForTerminal(blocker.command.id, {
      onOutput: (stream, chunk) => output.push(`${stream}:${chunk.toString()}`),
    });
    await eventually(async () => (output.join('').includes('started') ? true : undefined));
    t.same(output, ['stdout:started\n'], 'live output reaches the waiter on the running node');

    const second = await queue.enqueue({
      ...run,
      request: { command: 'echo never' },
      timeoutMs: 5000,
    });
    const cancelledQueued = await queue.cancel(second.command.id);
    t.equal(cancelledQueued?.status, 'cancelled', 'a queued command is cancelled at once');
    const secondEnd = await queue.waitForTerminal(second.command.id);
    t.equal(secondEnd.status, 'cancelled');
    t.equal(secondEnd.attempts, 0);
    t.same(await eventTypes(db, second.command.id), [
      'workspace_command.queued',
      'workspace_command.cancelled',
    ]);

    t.equal((await leftovers(marker, 0)).length, 1, 'the blocker is running');
    const flagged = await queue.cancel(blocker.command.id);
    t.equal(flagged?.status, 'running', 'a running command is flagged, then ended by its worker');
    t.equal(flagged?.cancelRequested, true);
    const end = await blockerEnd;
    t.equal(end.status, 'cancelled');
    t.equal(end.errorCategory, 'cancelled');
    t.equal(end.stdout?.toString(), 'started\n', 'output up to the cancel is kept');
    t.same(await leftovers(marker), [], 'the sandboxed process is gone');
    t.same(await eventTypes(db, blocker.command.id), [
      'workspace_command.queued',
      'workspace_command.running',
      'workspace_command.cancelled',
    ]);
    // The worker claims the oldest queued command first: once a command queued after the
    // cancelled one has run, the worker has looked past the cancelled one.
    const after = await queue.enqueue({
      ...run,
      request: { command: 'echo after' },
      timeoutMs: 5000,
    });
    t.equal((await queue.waitForTerminal(after.command.id)).status, 'completed');
    t.same(
      ran.slice(ran.indexOf(blocker.command.id)),
      [blocker.command.id, after.command.id],
      'the cancelled queued command never ran; the next one did',
    );
    t.equal(
      await queue.cancel(blocker.command.id).then((c) => c?.status),
      'cancelled',
      'cancel again is harmless',
    );
  });

  t.test('a cancel through another node reaches the worker through its heartbeat', async (t) => {
    const run = await newRun(db);
    const worker = makeQueue(t, {
      db,
      execute,
      nodeId: 'node-a',
      leaseMs: 900,
      pollIntervalMs: 100,
    });
    const other = makeQueue(t, { db, execute, nodeId: 'node-b' });
    worker.start();
    const marker = markedSleep(30);
    t.teardown(async () => killAll(await leftovers(marker, 0)));
    const { command } = await worker.enqueue({
      ...run,
      request: { command: `exec sleep ${marker}` },
      timeoutMs: 60_000,
    });
    await eventually(async () => ((await leftovers(marker, 0)).length ? true : undefined));
    t.equal((await other.cancel(command.id))?.cancelRequested, true);
    const end = await other.waitForTerminal(command.id);
    // Only the worker's abort for a cancel, which it learns from its heartbeat, records
    // `cancelled` for a running command; left alone it would have completed after 30 s.
    t.equal(end.status, 'cancelled');
    t.equal(end.errorCategory, 'cancelled');
    t.same(await leftovers(marker), []);
  });

  t.test('a command over its time limit ends timed_out / command_timeout', async (t) => {
    const run = await newRun(db);
    const queue = makeQueue(t, { db, execute });
    queue.start();
    const marker = markedSleep(30);
    t.teardown(async () => killAll(await leftovers(marker, 0)));
    const { command } = await queue.enqueue({
      ...run,
      request: { command: `exec sleep ${marker}` },
      timeoutMs: 300,
    });
    const end = await queue.waitForTerminal(command.id);
    t.equal(end.status, 'timed_out');
    t.equal(end.errorCategory, 'command_timeout');
    t.same(await leftovers(marker), []);
    const events = await listAuditEvents(db, { commandId: command.id });
    const last = events.at(-1);
    t.equal(last?.eventType, 'workspace_command.timed_out');
    t.equal(last?.metadata.errorCategory, 'command_timeout');
    t.equal(last?.metadata.timeoutMs, 300);
  });

  t.test('an executor that outlives the timeout is stopped by the worker backstop', async (t) => {
    const run = await newRun(db);
    let sawAbort = false;
    const stuck: ExecuteCommand = (_command, ctx) =>
      new Promise((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () => {
          sawAbort = true;
          reject(ctx.signal.reason);
        });
      });
    const queue = makeQueue(t, { db, execute: stuck, timeoutGraceMs: 200 });
    queue.start();
    const { command } = await queue.enqueue({ ...run, request: { command: 'x' }, timeoutMs: 200 });
    const end = await queue.waitForTerminal(command.id);
    t.equal(end.status, 'timed_out');
    t.equal(end.errorCategory, 'worker_timeout');
    t.ok(sawAbort, 'the executor was told to stop');
  });

  t.test('an executor that cannot run the command ends it failed, with the code', async (t) => {
    const run = await newRun(db);
    const failing: ExecuteCommand = async (command) => {
      if ((command.request as { kind?: string }).kind === 'no-sandbox') {
        throw new WorkbenchError('no_sandbox', 'no_sandbox: no runner here');
      }
      throw new Error('boom');
    };
    const queue = makeQueue(t, { db, execute: failing });
    queue.start();
    const a = await queue.enqueue({ ...run, request: { kind: 'no-sandbox' }, timeoutMs: 1000 });
    const b = await queue.enqueue({ ...run, request: { kind: 'bug' }, timeoutMs: 1000 });
    const [ea, eb] = await Promise.all([
      queue.waitForTerminal(a.command.id),
      queue.waitForTerminal(b.command.id),
    ]);
    t.match(ea, { status: 'failed', errorCode: 'no_sandbox', errorCategory: 'environment' });
    t.match(eb, { status: 'failed', errorCode: 'internal', errorCategory: 'internal' });
    t.equal((await eventTypes(db, a.command.id)).at(-1), 'workspace_command.failed');
  });

  t.test('a non-zero exit is a completed command with its exit code', async (t) => {
    const run = await newRun(db);
    const queue = makeQueue(t, { db, execute });
    queue.start();
    const { command } = await queue.enqueue({
      ...run,
      request: { command: 'echo out; echo err >&2; exit 3' },
      timeoutMs: 5000,
    });
    const end = await queue.waitForTerminal(command.id);
    t.match(end, { status: 'completed', exitCode: 3, errorCode: null });
    t.equal(end.stdout?.toString(), 'out\n');
    t.equal(end.stderr?.toString(), 'err\n');
    t.ok(end.execDurationMs !== null && end.execDurationMs >= 0, 'the run time is kept');
  });

  t.test('a callId replay returns the first command and runs nothing again', async (t) => {
    const run = await newRun(db);
    const queue = makeQueue(t, { db, execute });
    queue.start();
    const [first, racing] = await Promise.all([
      queue.enqueue({
        ...run,
        callId: 'call-1',
        request: { command: 'echo first' },
        timeoutMs: 5000,
      }),
      queue.enqueue({
        ...run,
        callId: 'call-1',
        request: { command: 'echo racing' },
        timeoutMs: 5000,
      }),
    ]);
    t.equal(
      [first.created, racing.created].filter(Boolean).length,
      1,
      'one of two racing calls queues',
    );
    t.equal(first.command.id, racing.command.id);
    const end = await queue.waitForTerminal(first.command.id);
    const replay = await queue.enqueue({
      ...run,
      callId: 'call-1',
      request: { command: 'echo second' },
      timeoutMs: 5000,
    });
    t.equal(replay.created, false);
    t.equal(replay.command.id, first.command.id);
    t.equal(replay.command.status, 'completed', 'the replay sees the first result');
    t.equal(replay.command.stdout?.toString(), end.stdout?.toString());
    const again = await queue.waitForTerminal(replay.command.id);
    t.equal(again.stdout?.toString(), `${first.created ? 'first' : 'racing'}\n`);
    // A command queued after the replay has run: the worker has claimed past the replay.
    const later = await queue.enqueue({
      ...run,
      callId: 'call-2',
      request: { command: 'echo later' },
      timeoutMs: 5000,
    });
    t.equal((await queue.waitForTerminal(later.command.id)).status, 'completed');
    t.equal(ran.filter((id) => id === first.command.id).length, 1, 'it ran once');
    t.same(await eventTypes(db, first.command.id), [
      'workspace_command.queued',
      'workspace_command.running',
      'workspace_command.completed',
    ]);
  });

  t.test('a caller that stopped waiting reads the outcome by command id later', async (t) => {
    const run = await newRun(db);
    const queue = makeQueue(t, { db, execute });
    queue.start();
    // The command runs until the test creates its gate file.
    const gate = `gate-${run.runId}`;
    const { command } = await queue.enqueue({
      ...run,
      request: { command: `until [ -e ${gate} ]; do sleep 0.05; done; echo late-output` },
      timeoutMs: 60_000,
    });
    const gone = new AbortController();
    const waiting = queue.waitForTerminal(command.id, { signal: gone.signal });
    await eventually(async () => (ran.includes(command.id) ? true : undefined));
    gone.abort(new Error('connection lost'));
    await t.rejects(waiting, { message: 'connection lost' }, 'the waiter is released');
    t.equal((await queue.get(command.id))?.status, 'running', 'while the command runs on');
    await writeFile(join(dir, gate), '');
    const row = await eventually(async () => {
      const r = await queue.get(command.id);
      return r?.status === 'completed' ? r : undefined;
    });
    t.equal(row.stdout?.toString(), 'late-output\n', 'the command finished without its caller');
    const later = await queue.waitForTerminal(command.id);
    t.equal(later.stdout?.toString(), 'late-output\n', 'a new wait answers at once');
    await t.rejects(queue.waitForTerminal('no-such-command'), { code: 'not_found' });
  });

  t.test('a queue moves only forward through its lifecycle, one line per move', async (t) => {
    const captured = captureLog();
    const queue = makeQueue(t, { db, execute, log: captured.log });
    await queue.drain();
    t.equal(queue.lifecycle, 'new', 'a queue that never started does not drain');
    queue.start();
    t.throws(() => queue.start(), 'a running queue cannot start again');
    await queue.drain();
    await queue.drain();
    t.equal(queue.lifecycle, 'draining', 'a second drain is a no-op');
    await queue.stop({ graceMs: 0 });
    t.equal(queue.lifecycle, 'stopped');
    t.throws(() => queue.start(), 'a stopped queue cannot start');
    await queue.drain();
    t.equal(queue.lifecycle, 'stopped', 'nor drain');
    const unstarted = makeQueue(t, { db, execute, log: captured.log });
    await unstarted.stop();
    t.throws(() => unstarted.start(), 'a queue stopped before it started cannot start');
    const moves = captured
      .lines()
      .filter((l) => l.machine === 'command-queue')
      .map(
        (l) => `${l.leaseOwner === queue.leaseOwner ? 'queue' : 'unstarted'}: ${l.from} -> ${l.to}`,
      );
    t.same(moves, [
      'queue: new -> running',
      'queue: running -> draining',
      'queue: draining -> stopping',
      'queue: stopping -> stopped',
      'unstarted: new -> stopping',
      'unstarted: stopping -> stopped',
    ]);
  });
});
