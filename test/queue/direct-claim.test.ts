import t from 'tap';
import type { ExecuteCommand } from '../../src/queue/index.js';
import {
  type Command,
  claimCommands,
  enqueueCommand,
  finishAndClaim,
  getCommand,
  getWorkspaceHead,
  listAuditEvents,
  provisionWorkspace,
} from '../../src/store/index.js';
import {
  captureLog,
  emptyRun,
  eventually,
  isClaim,
  makeQueue,
  newRun,
  setupDb,
  watchedDb,
} from './queue-support.js';

/**
 * An enqueue by the node that holds the run's workspace, with a free slot and nothing
 * queued before it, inserts the command already claimed: it starts without a claim
 * statement and without waiting, and its `.queued` and `.running` events are both
 * written, in that order, in the enqueue's statement. Real Postgres.
 */

t.test('a free slot claims the command in its enqueue; a busy one queues it', async (t) => {
  const { db } = await setupDb(t);
  const run = await newRun(db);
  const gates = new Map<string, () => void>();
  const execute: ExecuteCommand = async (command) => {
    const name = (command.request as { command: string }).command;
    await new Promise<void>((release) => gates.set(name, release));
    return emptyRun();
  };
  let claims = 0;
  // Without a listener: a listen that starts wakes the worker for one more look, and an
  // enqueue during that look would rightly queue. Polling is off in effect too, so the
  // worker looks once as it starts and then only when an enqueue or a finish asks.
  const { listen: _listen, ...watched } = watchedDb(db, (sql) => {
    if (isClaim(sql)) claims += 1;
  });
  const captured = captureLog();
  const queue = makeQueue(t, {
    db: watched,
    execute,
    concurrency: 1,
    pollIntervalMs: 3_600_000,
    log: captured.log,
  });
  queue.start();
  // The worker looks once as it starts (nothing is queued yet); then it idles.
  await eventually(async () => (claims >= 1 ? true : undefined), 10_000, 'the first look');
  const first = await queue.enqueue(
    { ...run, request: { command: 'a' }, timeoutMs: 5000 },
    { claimHere: true },
  );
  t.match(first.command, { status: 'running', leaseOwner: queue.leaseOwner, attempts: 1 });
  t.ok(first.command.startedAt, 'started in the enqueue');
  // The claim carries the run's head, as a read of it would have found it.
  t.same(first.command.claimedHead, await getWorkspaceHead(db, run.runId), 'with the head');
  t.same(first.command.claimedHead, { version: 0, updatedByNode: null, holder: null });
  const second = await queue.enqueue(
    { ...run, request: { command: 'b' }, timeoutMs: 5000 },
    { claimHere: true },
  );
  t.match(second.command, { status: 'queued', leaseOwner: null }, 'no slot: it waits');
  t.notOk('claimedHead' in second.command, 'a queued command carries no head');
  await eventually(async () => gates.get('a'));
  gates.get('a')!();
  await queue.waitForTerminal(first.command.id);
  await eventually(async () => gates.get('b'), 10_000, 'b claimed once a finished');
  gates.get('b')!();
  await queue.waitForTerminal(second.command.id);
  const events = async (id: string) => listAuditEvents(db, { commandId: id });
  const direct = await events(first.command.id);
  t.same(
    direct.map((e) => e.eventType),
    ['workspace_command.queued', 'workspace_command.running', 'workspace_command.completed'],
  );
  t.match(direct[0]!.metadata, { status: 'queued', attempts: 0, queueWaitMs: null });
  t.match(direct[1]!.metadata, { status: 'running', attempts: 1 });
  t.same(
    (await events(second.command.id)).map((e) => e.eventType),
    ['workspace_command.queued', 'workspace_command.running', 'workspace_command.completed'],
  );

  // The log: a `.queued` line at info says a command waits; for the one claimed in its
  // enqueue it is debug, since the `.running` line written with it says the same.
  const line = (id: string, event: string) =>
    captured.lines().find((l) => l.commandId === id && l.event === event);
  await eventually(async () => {
    captured.log.flush();
    return line(second.command.id, 'workspace_command.completed') ? true : undefined;
  });
  t.match(line(first.command.id, 'workspace_command.queued'), { level: 20 }, 'claimed: debug');
  t.match(line(first.command.id, 'workspace_command.running'), { level: 30, queueWaitMs: 0 });
  t.match(line(second.command.id, 'workspace_command.queued'), { level: 30 }, 'waited: info');
  t.match(line(second.command.id, 'workspace_command.running'), { level: 30 });
});

t.test('the claim in an enqueue never overtakes, nor takes another node’s run', async (t) => {
  const { db } = await setupDb(t);
  const mine = { leaseOwner: 'node-a/test', leaseMs: 5000, nodeId: 'node-a' };
  const runA = await newRun(db);
  const runB = await newRun(db);
  await provisionWorkspace(db, { runId: runB.runId, nodeId: 'node-b', ownerUserId: 'user-1' });
  const insert = (run: typeof runA, id: string, claim = true): Promise<Command> =>
    enqueueCommand(
      db,
      { ...run, id, request: { command: 'x' }, timeoutMs: 5000 },
      claim ? { claim: mine } : {},
    ).then((r) => r.command);

  t.match(await insert(runB, 'c-other'), { status: 'queued' }, 'node-b holds run B');
  t.match(await insert(runA, 'c-behind'), { status: 'queued' }, 'something queued waits');
  await db.execute(`delete from workspace_command where status = 'queued'`, []);
  const claimed = await insert(runA, 'c-free');
  t.match(claimed, { status: 'running', leaseOwner: 'node-a/test' });
  t.ok(claimed.leaseExpiresAt && claimed.startedAt, 'its lease is taken');
  t.match(await getCommand(db, 'c-free'), { status: 'running', attempts: 1 });
  t.match(await insert(runA, 'c-plain', false), { status: 'queued' }, 'no claim asked');
});

t.test("a worker's claim carries each command's head", async (t) => {
  const { db } = await setupDb(t);
  const run = await newRun(db);
  const { command } = await enqueueCommand(db, {
    id: `cmd-${run.runId}`,
    ...run,
    request: { command: 'c' },
    timeoutMs: 5000,
  });
  t.notOk('claimedHead' in command, 'queued: no head');
  const [claimed] = await claimCommands(db, 'owner-1', 30_000, 1);
  t.equal(claimed?.id, command.id);
  t.same(claimed?.claimedHead, await getWorkspaceHead(db, run.runId));
});

t.test("a claim made by another command's finish carries the head too", async (t) => {
  const { db } = await setupDb(t);
  const run = await newRun(db);
  const other = await newRun(db);
  // Only the claimed command's run has a holder: its head is told apart from the other's.
  await provisionWorkspace(db, { runId: other.runId, nodeId: 'node-b', ownerUserId: 'user-1' });
  const ids = [`a-${run.runId}`, `b-${other.runId}`];
  for (const [i, r] of [run, other].entries()) {
    await enqueueCommand(db, { id: ids[i]!, ...r, request: { command: 'c' }, timeoutMs: 5000 });
  }
  const [first] = await claimCommands(db, 'owner-1', 30_000, 1);
  t.equal(first?.id, ids[0]);
  const { row, claimed } = await finishAndClaim(
    db,
    ids[0]!,
    'owner-1',
    { status: 'completed', exitCode: 0 },
    { limit: 1, leaseMs: 30_000 },
  );
  t.equal(row?.status, 'completed');
  t.notOk(row && 'claimedHead' in row, 'the finished row carries no head');
  t.equal(claimed.length, 1);
  t.equal(claimed[0]?.id, ids[1]);
  const head = await getWorkspaceHead(db, other.runId);
  t.equal(head.holder?.nodeId, 'node-b');
  t.same(claimed[0]?.claimedHead, head, "its own run's head");
});
