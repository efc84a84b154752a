import t from 'tap';
import { WorkbenchError } from '../../src/contract/errors.js';
import type { ExecuteCommand } from '../../src/queue/index.js';
import { claimCommands, getCommand, registerWorker } from '../../src/store/index.js';
import { emptyRun, eventTypes, eventually, makeQueue, newRun, setupDb } from './queue-support.js';

/**
 * A command that never began is never recorded as lost or failed for a reason that
 * passes: it goes back to the queue and runs later. Refused before it began (its
 * workspace moved to another live node), cut by its node stopping before it began, or
 * claimed by a worker that died before it began: each runs once, to its real end.
 * Real Postgres, in-process queues.
 */

const ran = new Map<string, string[]>();
/** An executor that marks the command begun, notes who ran it and succeeds. */
const running =
  (node: string): ExecuteCommand =>
  async (command, ctx) => {
    await ctx.begin();
    ran.set(command.id, [...(ran.get(command.id) ?? []), node]);
    return emptyRun();
  };

t.test('queued again', async (t) => {
  const { db } = await setupDb(t);

  t.test('refused before it began: queued again, then it runs', async (t) => {
    const run = await newRun(db);
    let refusals = 0;
    const execute: ExecuteCommand = async (command, ctx) => {
      if (refusals === 0) {
        refusals += 1;
        throw new WorkbenchError('unavailable', 'unavailable: the workspace moved', {
          reason: 'workspace_moved',
        });
      }
      return running('a')(command, ctx);
    };
    const q = makeQueue(t, { db, execute, executorMarksBegin: true, pollIntervalMs: 50 });
    q.start();
    const { command } = await q.enqueue({ ...run, request: {}, timeoutMs: 10_000 });
    const end = await q.waitForTerminal(command.id);
    t.match(end, { status: 'completed', exitCode: 0, attempts: 2, errorCode: null });
    t.same(ran.get(command.id), ['a'], 'it ran once');
    t.same(await eventTypes(db, command.id), [
      'workspace_command.queued',
      'workspace_command.running',
      'workspace_command.queued',
      'workspace_command.running',
      'workspace_command.completed',
    ]);
  });

  t.test('a stopping node gives back what it had not begun', async (t) => {
    const run = await newRun(db);
    let claimed = false;
    const stalled: ExecuteCommand = (_command, ctx) =>
      new Promise((_resolve, reject) => {
        claimed = true;
        // Stuck before its start (waiting for a workspace, say) until the node stops.
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
      });
    const a = makeQueue(t, { db, execute: stalled, executorMarksBegin: true, nodeId: 'node-a' });
    a.start();
    const { command } = await a.enqueue({ ...run, request: {}, timeoutMs: 10_000 });
    await eventually(async () => (claimed ? true : undefined));
    await a.stop({ graceMs: 0 });
    t.match(await getCommand(db, command.id), { status: 'queued', leaseOwner: null });
    const b = makeQueue(t, {
      db,
      execute: running('b'),
      executorMarksBegin: true,
      nodeId: 'node-b',
    });
    b.start();
    t.match(await b.waitForTerminal(command.id), { status: 'completed', attempts: 2 });
    t.same(ran.get(command.id), ['b']);
  });

  t.test('a worker lost before it began: queued again by recovery, run elsewhere', async (t) => {
    const run = await newRun(db);
    const b = makeQueue(t, {
      db,
      execute: running('b'),
      executorMarksBegin: true,
      nodeId: 'node-b',
      recoveryIntervalMs: 100,
    });
    const { command } = await b.enqueue({ ...run, request: {}, timeoutMs: 10_000 });
    // A worker that claims it and dies at once, long ago by its heartbeat.
    await registerWorker(db, { leaseOwner: 'ghost/w', nodeId: 'ghost' });
    t.equal((await claimCommands(db, 'ghost/w', 600_000, 1))[0]?.id, command.id);
    await db.execute(
      `update workbench_worker set heartbeat_at = now() - interval '1 hour' where lease_owner = 'ghost/w'`,
    );
    b.start();
    const end = await b.waitForTerminal(command.id);
    t.match(end, { status: 'completed', attempts: 2, errorCode: null });
    t.same(ran.get(command.id), ['b']);
    const events = await eventTypes(db, command.id);
    t.notOk(events.includes('workspace_command.recovered_stale'), 'never recorded as lost');
    t.equal(events.filter((e) => e === 'workspace_command.queued').length, 2);
  });
});
