import t from 'tap';
import {
  claimCommands,
  enqueueCommand,
  getCommand,
  heartbeatWorker,
  listAuditEvents,
  markCommandBegan,
  nodeLiveness,
  provisionWorkspace,
  readContinuity,
  readStaleCandidates,
  registerWorker,
  requestCommandCancel,
  requeueCommands,
} from '../../src/store/index.js';
import { newRun, setupDb } from '../queue/queue-support.js';

/**
 * The statements behind stale recovery's evidence, on a real Postgres: the
 * continuity row every heartbeat beats (a new stretch after a gap), claims and
 * takeovers that count an old heartbeat as gone only when the database has been
 * steady, the read of stale candidates (never the reader's own), and putting a
 * command that never began back in the queue (never one that began).
 */

const GAP_MS = 4000;
const EVIDENCE = { steadyMs: 12_000, gapMs: GAP_MS };

t.test('recovery evidence', async (t) => {
  const { db } = await setupDb(t);
  /** Sets the continuity row as if beaten since `sinceS` and last `lastS` seconds ago. */
  const continuity = (sinceS: number, lastS: number) =>
    db.execute(
      `update workbench_db_continuity set beaten_since = now() - ($1 * interval '1 second'),
         beaten_at = now() - ($2 * interval '1 second') where id = 1`,
      [sinceS, lastS],
    );
  const silence = (leaseOwner: string, seconds: number) =>
    db.execute(
      `update workbench_worker set heartbeat_at = now() - ($2 * interval '1 second')
       where lease_owner = $1`,
      [leaseOwner, seconds],
    );

  t.test('a heartbeat beats the continuity; a gap starts a new stretch', async (t) => {
    t.equal(await readContinuity(db), null, 'nothing before the first beat');
    await registerWorker(db, { leaseOwner: 'n1/w', nodeId: 'n1', gapMs: GAP_MS });
    const first = await readContinuity(db);
    t.ok(first && first.steadyMs < 1000 && first.lastBeatAgeMs < 1000, 'made by the first beat');
    await continuity(3600, 1);
    t.ok(await heartbeatWorker(db, 'n1/w', GAP_MS));
    t.ok((await readContinuity(db))!.steadyMs > 3_500_000, 'a beat within the gap continues it');
    await continuity(3600, 10);
    await heartbeatWorker(db, 'n1/w', GAP_MS);
    const after = (await readContinuity(db))!;
    t.ok(after.steadyMs < 1000, `a beat after a 10 s silence starts anew (${after.steadyMs} ms)`);
  });

  t.test('an old heartbeat moves nothing until the database has been steady', async (t) => {
    const run = await newRun(db);
    const ws = await provisionWorkspace(db, { ...run, nodeId: 'n-holder' });
    await registerWorker(db, { leaseOwner: 'n-holder/w', nodeId: 'n-holder' });
    await silence('n-holder/w', 30);
    const { command } = await enqueueCommand(db, {
      id: `cmd-${run.runId}`,
      ...run,
      workspaceId: ws.id,
      request: {},
      timeoutMs: 1000,
    });
    const affinity = { nodeId: 'n-other', livenessMs: 10_000, evidence: EVIDENCE };
    // Just after an outage: every heartbeat old, the stretch young.
    await continuity(1, 0);
    t.same(await claimCommands(db, 'n-other/w', 60_000, 1, affinity), [], 'not claimed');
    t.equal(await nodeLiveness(db, 'n-holder', 10_000, EVIDENCE), 'serving');
    // No beat since the outage at all.
    await continuity(3600, 20);
    t.same(await claimCommands(db, 'n-other/w', 60_000, 1, affinity), []);
    t.equal(await nodeLiveness(db, 'n-holder', 10_000, EVIDENCE), 'serving');
    t.equal(
      await nodeLiveness(db, 'n-holder', 10_000),
      'gone',
      'without evidence asked for, the old heartbeat is taken at its word',
    );
    // Steady for an hour: the silence means what it says.
    await continuity(3600, 0);
    t.equal(await nodeLiveness(db, 'n-holder', 10_000, EVIDENCE), 'gone');
    const claimed = await claimCommands(db, 'n-other/w', 60_000, 1, affinity);
    t.same(
      claimed.map((c) => c.id),
      [command.id],
      'the gone holder’s command is claimed',
    );
  });

  t.test('stale candidates, and queueing again what never began', async (t) => {
    const run = await newRun(db);
    const enqueue = async (n: number) =>
      (
        await enqueueCommand(db, {
          id: `cmd-${run.runId}-${n}`,
          ...run,
          request: {},
          timeoutMs: 1000,
        })
      ).command;
    await registerWorker(db, { leaseOwner: 'dead/w', nodeId: 'dead' });
    await registerWorker(db, { leaseOwner: 'me/w', nodeId: 'me' });
    const a = await enqueue(1);
    const b = await enqueue(2);
    t.equal((await claimCommands(db, 'dead/w', 600_000, 2)).length, 2);
    t.ok(await markCommandBegan(db, a.id, 'dead/w'), 'a began');
    t.notOk(await markCommandBegan(db, a.id, 'someone-else'), 'only under its lease');
    const c = await enqueue(3);
    t.equal((await claimCommands(db, 'me/w', 600_000, 1))[0]?.id, c.id);
    await silence('dead/w', 60);
    await silence('me/w', 60);
    await continuity(3600, 0);
    const seen = await readStaleCandidates(db, new Date(), {
      livenessMs: 10_000,
      exceptOwner: 'me/w',
    });
    const mine = seen.filter((s) => s.runId === run.runId);
    t.same(
      mine.map((s) => [s.id, s.began, s.worker?.status]).sort(),
      [
        [a.id, true, 'serving'],
        [b.id, false, 'serving'],
      ],
      'the dead worker’s commands, never the reader’s own',
    );
    t.ok(mine.every((s) => s.worker!.heartbeatAgeMs >= 59_000 && s.database!.steadyMs > 3_500_000));

    const held = [a, b].map((x) => ({ id: x.id, leaseOwner: 'dead/w' }));
    const requeued = await requeueCommands(db, held);
    t.same(
      requeued.map((r) => [r.id, r.status, r.leaseOwner, r.attempts]),
      [[b.id, 'queued', null, 1]],
      'only the one that never began goes back, keeping its attempts',
    );
    t.equal(
      (await getCommand(db, a.id))?.status,
      'running',
      'one that began is never queued again',
    );
    t.same(
      (await listAuditEvents(db, { commandId: b.id })).map((e) => e.eventType),
      ['workspace_command.queued', 'workspace_command.running', 'workspace_command.queued'],
    );
    t.same(await requeueCommands(db, held), [], 'a compare-and-set: not twice');

    // A cancel asked while it was claimed: it ends cancelled instead of queued.
    t.equal((await claimCommands(db, 'dead/w', 600_000, 1))[0]?.id, b.id);
    await requestCommandCancel(db, b.id);
    const [cancelled] = await requeueCommands(db, [{ id: b.id, leaseOwner: 'dead/w' }]);
    t.match(cancelled, { status: 'cancelled', errorCode: 'cancelled' });
  });
});
