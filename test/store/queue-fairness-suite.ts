import type { Test } from 'tap';
import {
  type Command,
  claimCommands,
  claimNextCommand,
  createRun,
  type Db,
  enqueueCommand,
  finishCommand,
  listAuditEvents,
} from '../../src/store/index.js';
import { uid } from './store-suite.js';

/** A lead longer than any of these tests takes: every later command keeps its run's place. */
const LONG_LEAD_MS = 3_600_000;

async function newRun(db: Db): Promise<string> {
  return (await createRun(db, { id: uid('fair-run'), ownerUserId: 'user-f' })).id;
}

function enqueue(db: Db, runId: string, label: string, followUpLeadMs: number) {
  return enqueueCommand(
    db,
    { id: uid(`cmd-${label}`), runId, ownerUserId: 'user-f', timeoutMs: 1000, request: { label } },
    { followUpLeadMs },
  );
}

/** Claims whatever other subtests left queued, so a subtest sees only its own commands. */
async function drain(db: Db): Promise<void> {
  while (await claimNextCommand(db, 'drain', 60_000)) {}
}

/**
 * The queue's fairness across runs (`store/command-place.ts`), on any driver: claim
 * order is read from the claims' rows and from their `workspace_command.running` events,
 * never from timings.
 */
export function queueFairnessSuite(t: Test, db: Db): void {
  t.test("a run's second command is claimed before later runs' first commands", async (t) => {
    await drain(db);
    const runs: string[] = [];
    for (let i = 0; i < 12; i++) runs.push(await newRun(db));
    const label = new Map<string, string>();
    // Every run sends its first command at once; each sends its second once its first
    // has answered, as a tool loop does.
    for (const [i, runId] of runs.entries()) {
      const { command } = await enqueue(db, runId, `r${i}-first`, LONG_LEAD_MS);
      label.set(command.id, `r${i}-first`);
    }
    const order: string[] = [];
    const claimed: Command[] = [];
    for (;;) {
      const command = await claimNextCommand(db, 'fair-worker', 60_000);
      if (command === null) break;
      claimed.push(command);
      order.push(label.get(command.id)!);
      await finishCommand(db, command.id, 'fair-worker', { status: 'completed', exitCode: 0 });
      const first = /^r(\d+)-first$/.exec(label.get(command.id)!);
      if (first) {
        const i = Number(first[1]);
        const { command: second } = await enqueue(db, runs[i]!, `r${i}-second`, LONG_LEAD_MS);
        label.set(second.id, `r${i}-second`);
        t.equal(
          second.queuePlace.getTime(),
          command.queuePlace.getTime(),
          'a later command stands where its run stood',
        );
      }
    }
    const expected = runs.flatMap((_, i) => [`r${i}-first`, `r${i}-second`]);
    t.same(order, expected, "each run's second command comes before the next run's first");

    // The running events, in the order written, say the same.
    const events = [];
    for (const runId of runs) {
      events.push(
        ...(await listAuditEvents(db, { runId })).filter(
          (e) => e.eventType === 'workspace_command.running',
        ),
      );
    }
    events.sort((a, b) => a.id - b.id);
    t.same(
      events.map((e) => label.get(e.commandId!)),
      expected,
    );
    t.ok(
      claimed.every((c) => c.status === 'running' && c.attempts === 1),
      'each claimed once',
    );
  });

  t.test('with a lead of 0 the queue is first come, first served', async (t) => {
    await drain(db);
    const a = await newRun(db);
    const b = await newRun(db);
    const a1 = (await enqueue(db, a, 'a1', 0)).command;
    const b1 = (await enqueue(db, b, 'b1', 0)).command;
    const a2 = (await enqueue(db, a, 'a2', 0)).command;
    const got = await claimCommands(db, 'fifo', 60_000, 10);
    t.same(
      got.map((c) => c.id),
      [a1.id, b1.id, a2.id],
    );
  });

  t.test('a run that keeps enqueuing passes a new run by at most the lead', async (t) => {
    await drain(db);
    const leadMs = 400;
    const busy = await newRun(db);
    const fresh = await newRun(db);
    const busyIds = new Set<string>();
    busyIds.add((await enqueue(db, busy, 'busy', leadMs)).command.id);
    const newcomer = (await enqueue(db, fresh, 'new', leadMs)).command;
    // The busy run keeps sending until its commands arrive well past the lead.
    const limit = newcomer.queuedAt.getTime() + leadMs;
    let last: Command;
    do {
      last = (await enqueue(db, busy, 'busy', leadMs)).command;
      busyIds.add(last.id);
    } while (last.queuedAt.getTime() <= limit + 5);

    const order: Command[] = [];
    for (;;) {
      const got = await claimCommands(db, 'bound', 60_000, 16);
      if (got.length === 0) break;
      order.push(...got);
    }
    t.equal(order.length, busyIds.size + 1, 'every command is claimed once');
    const at = order.findIndex((c) => c.id === newcomer.id);
    t.ok(at >= 0);
    // Dates are read to the millisecond: a 1 ms slack either side.
    for (const c of order.slice(0, at)) {
      t.ok(
        c.queuedAt.getTime() <= limit + 1,
        `a command claimed before the new run's arrived within the lead (${c.queuedAt.getTime() - newcomer.queuedAt.getTime()} ms after it)`,
      );
    }
    const late = order.filter((c) => c.queuedAt.getTime() > limit + 1);
    t.ok(late.length > 0, 'some of the busy run arrived past the lead');
    for (const c of late) {
      t.ok(order.indexOf(c) > at, 'a command that arrived past the lead is claimed after it');
    }
    t.equal(order[0]!.runId, busy, "the busy run's first command came first");
  });

  t.test('concurrent claimers never claim a command twice', async (t) => {
    await drain(db);
    const ids = new Set<string>();
    const runs = await Promise.all(Array.from({ length: 20 }, () => newRun(db)));
    for (let round = 0; round < 3; round++) {
      for (const runId of runs) ids.add((await enqueue(db, runId, 'c', LONG_LEAD_MS)).command.id);
    }
    const seen = new Map<string, string>();
    let doubles = 0;
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        const owner = `claimer-${w}`;
        for (;;) {
          const got = await claimCommands(db, owner, 60_000, 1 + (w % 3));
          if (got.length === 0) return;
          for (const c of got) {
            if (seen.has(c.id)) doubles += 1;
            seen.set(c.id, owner);
            t.equal(c.leaseOwner, owner);
          }
        }
      }),
    );
    t.equal(doubles, 0, 'no command is claimed by two claimers');
    t.same([...seen.keys()].sort(), [...ids].sort(), 'every command is claimed');
    let oneEventEach = true;
    for (const id of seen.keys()) {
      const events = (await listAuditEvents(db, { commandId: id })).filter(
        (e) => e.eventType === 'workspace_command.running',
      );
      if (events.length !== 1) oneEventEach = false;
    }
    t.ok(oneEventEach, 'each command has exactly one running event');
    t.same(await claimCommands(db, 'late', 60_000, 1), [], 'nothing is left to claim');
  });
}
