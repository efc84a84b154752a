import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import type { ExecuteCommand } from '../../src/queue/index.js';
import { ProcessRunner } from '../../src/sandbox/process-runner.js';
import {
  claimNextCommand,
  finishCommand,
  getCommand,
  heartbeatCommand,
  listAuditEvents,
} from '../../src/store/index.js';
import { killAll, leftovers, markedSleep } from '../sandbox/sandbox-support.js';
import {
  eventTypes,
  eventually,
  makeQueue,
  newRun,
  runnerExecutor,
  setupDb,
  tempDir,
} from './queue-support.js';

const here = dirname(fileURLToPath(import.meta.url));
const runner = new ProcessRunner();

/** Starts the crash fixture and resolves with it once it says `ready`. */
async function startCrashWorker(
  url: string,
  dir: string,
  leaseMs: number,
): Promise<{ child: ChildProcess; lines: AsyncIterator<string> }> {
  const child = spawn(
    process.execPath,
    [join(here, 'fixtures/crash-worker.js'), url, dir, String(leaseMs)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.value !== 'ready') throw new Error(`crash worker did not start: ${first.value}`);
  return { child, lines };
}

t.test('stale recovery', async (t) => {
  const { db, url } = await setupDb(t);
  const dir = await tempDir(t);
  const ran: string[] = [];
  const inner = runnerExecutor(runner, dir);
  const execute: ExecuteCommand = (command, ctx) => {
    ran.push(command.id);
    return inner(command, ctx);
  };

  t.test('a worker killed mid-command: recovered once, failed, never run again', async (t) => {
    const run = await newRun(db);
    const marker = markedSleep(30);
    // SIGKILL leaves the crashed worker's sandboxed process behind (a real node takes
    // it down with its container); clean it up here.
    t.teardown(async () => killAll(await leftovers(marker, 0)));
    const { child, lines } = await startCrashWorker(url, dir, 1000);
    t.teardown(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });

    // Queued through another node's queue that is not started: only the child claims.
    const survivor = makeQueue(t, {
      db,
      execute,
      nodeId: 'node-survivor',
      leaseMs: 500,
      recoveryIntervalMs: 100,
    });
    const { command } = await survivor.enqueue({
      ...run,
      request: { command: `exec sleep ${marker}` },
      timeoutMs: 60_000,
    });
    const started = await lines.next();
    const [word, id, crashedOwner] = String(started.value).split(' ');
    t.equal(word, 'running');
    t.equal(id, command.id, 'the child claimed the command');
    const running = await getCommand(db, command.id);
    t.equal(running?.status, 'running');
    t.equal(running?.leaseOwner, crashedOwner);
    t.match(crashedOwner, /^crash-node\//, 'the lease names the crashed worker');

    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;

    survivor.start();
    const end = await survivor.waitForTerminal(command.id);
    t.equal(end.status, 'failed');
    t.equal(end.errorCategory, 'recovered_stale');
    t.equal(end.attempts, 1, 'attempts count the one claim');
    const events = await listAuditEvents(db, { commandId: command.id });
    t.same(
      events.map((e) => e.eventType),
      [
        'workspace_command.queued',
        'workspace_command.running',
        'workspace_command.recovered_stale',
      ],
    );
    t.match(events.at(-1)?.metadata, {
      attempts: 1,
      status: 'failed',
      errorCategory: 'recovered_stale',
    });

    // More rounds of recovery and claims: nothing picks it up again.
    for (let round = 0; round < 3; round++) {
      t.same(
        (await survivor.recoverStale()).map((c) => c.id),
        [],
        `round ${round}: nothing more to recover`,
      );
    }
    t.notOk(ran.includes(command.id), 'the survivor never ran it');
    t.equal(await claimNextCommand(db, 'probe', 1000), null, 'it is not queued again');
    t.equal(
      await finishCommand(db, command.id, crashedOwner!, { status: 'completed', exitCode: 0 }),
      null,
      'a late finish under the old lease is refused',
    );
    t.equal(await heartbeatCommand(db, command.id, crashedOwner!, 1000), false);
    const after = await getCommand(db, command.id);
    t.match(after, { status: 'failed', errorCategory: 'recovered_stale', attempts: 1 });
    t.equal((await eventTypes(db, command.id)).length, 3, 'and no further event');
  });

  t.test('a worker whose lease was recovered under it stops and records nothing', async (t) => {
    const run = await newRun(db);
    const marker = markedSleep(30);
    t.teardown(async () => killAll(await leftovers(marker, 0)));
    const slow = makeQueue(t, {
      db,
      execute,
      nodeId: 'node-slow',
      leaseMs: 600,
      pollIntervalMs: 50,
    });
    // A node whose clock runs a minute ahead sees the lease as expired already.
    const ahead = makeQueue(t, {
      db,
      execute,
      nodeId: 'node-ahead',
      clock: { now: () => Date.now() + 60_000 },
    });
    slow.start();
    const { command } = await slow.enqueue({
      ...run,
      request: { command: `echo begun; exec sleep ${marker}` },
      timeoutMs: 60_000,
    });
    await eventually(async () => ((await leftovers(marker, 0)).length ? true : undefined));
    // Recovery skips a row whose lock a heartbeat holds at that instant (SKIP LOCKED);
    // the periodic loop would take it on a later round, so try a few rounds here.
    const recovered = await eventually(
      async () => {
        const rows = await ahead.recoverStale();
        return rows.length > 0 ? rows : undefined;
      },
      60_000,
      'the stale recovery',
    );
    t.same(
      recovered.map((c) => c.id),
      [command.id],
    );
    const end = await slow.waitForTerminal(command.id);
    t.match(end, { status: 'failed', errorCategory: 'recovered_stale' });
    t.same(
      await leftovers(marker),
      [],
      'the late worker killed its sandbox once its lease was gone',
    );
    await eventually(async () => (slow.runningHere().length === 0 ? true : undefined));
    const row = await getCommand(db, command.id);
    t.match(row, { status: 'failed', errorCategory: 'recovered_stale' }, 'the recovery stands');
    t.equal(row?.stdout, null, 'the late worker wrote no outcome');
    t.same(await eventTypes(db, command.id), [
      'workspace_command.queued',
      'workspace_command.running',
      'workspace_command.recovered_stale',
    ]);
  });

  t.test('stop: finishes what fits in the grace period, ends the rest node_stopping', async (t) => {
    const run = await newRun(db);
    const marker = markedSleep(30);
    t.teardown(async () => killAll(await leftovers(marker, 0)));
    const leaving = makeQueue(t, { db, execute, nodeId: 'node-leaving', leaseMs: 60_000 });
    leaving.start();
    const quick = await leaving.enqueue({
      ...run,
      request: { command: 'sleep 0.3; echo done' },
      timeoutMs: 10_000,
    });
    const long = await leaving.enqueue({
      ...run,
      request: { command: `echo begun; exec sleep ${marker}` },
      timeoutMs: 60_000,
    });
    await eventually(async () => (leaving.runningHere().length === 2 ? true : undefined));
    const pendingWait = leaving.waitForTerminal(long.command.id);
    const began = Date.now();
    await leaving.stop({ graceMs: 1000 });
    t.ok(Date.now() - began >= 900, 'stop waited out the grace period');
    t.equal(leaving.lifecycle, 'stopped');
    const cut = await pendingWait;
    t.match(
      cut,
      { status: 'failed', errorCode: 'node_stopping', errorCategory: 'shutdown' },
      'the caller hears the node stopped, not a plain cancel',
    );
    t.equal(cut.stdout?.toString(), 'begun\n', 'with what it printed before the cut');
    t.match(await getCommand(db, quick.command.id), { status: 'completed' });
    t.same(await leftovers(marker), [], 'the long one was killed');
    t.same(await eventTypes(db, long.command.id), [
      'workspace_command.queued',
      'workspace_command.running',
      'workspace_command.failed',
    ]);
    await t.rejects(leaving.waitForTerminal(long.command.id), { code: 'unavailable' });
    t.equal(ran.filter((id) => id === long.command.id).length, 1, 'run once only');
  });
});
