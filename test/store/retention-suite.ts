import type { Test } from 'tap';
import { sweepRetention } from '../../src/queue/index.js';
import {
  claimNextCommand,
  createRun,
  type Db,
  deleteExpiredAuditEvents,
  deleteExpiredCommands,
  deleteRunAuditEvents,
  deleteRunCommands,
  enqueueCommand,
  findRemovedCommand,
  finishCommand,
  getCallRecord,
  getCommand,
  insertAuditEvent,
  listAuditEvents,
} from '../../src/store/index.js';
import { uid } from './store-suite.js';

const DAY_MS = 86_400_000;

async function newRun(db: Db): Promise<string> {
  return (await createRun(db, { id: uid('keep-run'), ownerUserId: 'user-k' })).id;
}

async function drain(db: Db): Promise<void> {
  while (await claimNextCommand(db, 'drain', 60_000)) {}
}

/** A command of `runId` run to its end, its key `callId` when given. */
async function finished(db: Db, runId: string, callId?: string): Promise<string> {
  await drain(db);
  const { command } = await enqueueCommand(db, {
    id: uid('keep-cmd'),
    runId,
    ownerUserId: 'user-k',
    timeoutMs: 1000,
    request: { command: 'true' },
    ...(callId ? { callId } : {}),
  });
  const claimed = await claimNextCommand(db, 'keeper', 60_000);
  if (claimed?.id !== command.id) throw new Error('claimed another command');
  await finishCommand(db, command.id, 'keeper', { status: 'completed', exitCode: 0 });
  return command.id;
}

async function backdate(db: Db, ids: readonly string[], days: number): Promise<void> {
  await db.execute(
    `update workspace_command set queued_at = queued_at - $2 * interval '1 day',
       finished_at = finished_at - $2 * interval '1 day'
     where id = any($1::text[])`,
    [ids, days],
  );
}

/**
 * Retention of finished commands and audit events (`store/retention.ts`,
 * `queue/retention-sweep.ts`), and what a run's deletion takes with it. Run last: it
 * ages every audit event written before it.
 */
export function retentionSuite(t: Test, db: Db): void {
  t.test('finished commands past retention go in bounded batches; live ones never', async (t) => {
    const runId = await newRun(db);
    const old = [await finished(db, runId), await finished(db, runId), await finished(db, runId)];
    const recent = await finished(db, runId);
    await backdate(db, old, 40);
    await backdate(db, [recent], 10);
    // An old queued command and an old running one, their rows aged as far: never taken.
    await drain(db);
    const queued = (
      await enqueueCommand(db, {
        id: uid('keep-q'),
        runId,
        ownerUserId: 'user-k',
        timeoutMs: 1000,
        request: {},
      })
    ).command;
    const running = (
      await enqueueCommand(db, {
        id: uid('keep-r'),
        runId,
        ownerUserId: 'user-k',
        timeoutMs: 1000,
        request: {},
      })
    ).command;
    await db.execute(
      `update workspace_command set status = 'running', lease_owner = 'x',
      lease_expires_at = now() + interval '1 hour' where id = $1`,
      [running.id],
    );
    // A running row with a finish time (no statement writes one) still is not taken.
    await db.execute(
      `update workspace_command set queued_at = now() - interval '90 days',
         finished_at = case when status = 'running' then now() - interval '90 days' end
       where id = any($1::text[])`,
      [[queued.id, running.id]],
    );

    t.equal(await deleteExpiredCommands(db, 30 * DAY_MS, 2), 2, 'one batch takes at most 2');
    t.equal(await deleteExpiredCommands(db, 30 * DAY_MS, 2), 1, 'the rest');
    t.equal(await deleteExpiredCommands(db, 30 * DAY_MS, 2), 0, 'nothing more is old enough');
    for (const id of old) t.equal(await getCommand(db, id), null, 'an old finished row is gone');
    t.ok(await getCommand(db, recent), 'a row younger than retention stays');
    t.equal((await getCommand(db, queued.id))?.status, 'queued', 'a queued row stays');
    t.equal((await getCommand(db, running.id))?.status, 'running', 'a running row stays');
    await deleteRunCommands(db, runId);
  });

  t.test('the sweep runs batches until one comes back short, within its budget', async (t) => {
    const runId = await newRun(db);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await finished(db, runId));
    await backdate(db, ids, 400);
    const first = await sweepRetention(
      db,
      { commandKeepMs: 365 * DAY_MS, auditKeepMs: 0 },
      { batchRows: 2, maxBatches: 2 },
    );
    t.same(first, { commandsDeleted: 4, auditEventsDeleted: 0 }, 'two batches of two');
    const second = await sweepRetention(
      db,
      { commandKeepMs: 365 * DAY_MS, auditKeepMs: 0 },
      { batchRows: 2, maxBatches: 2 },
    );
    t.same(second, { commandsDeleted: 1, auditEventsDeleted: 0 }, 'the next sweep takes the rest');
    const none = await sweepRetention(db, { commandKeepMs: 0, auditKeepMs: 0 });
    t.same(none, { commandsDeleted: 0, auditEventsDeleted: 0 }, 'a keep of 0 keeps everything');
  });

  t.test('a removed command answers command_expired; its key never runs it again', async (t) => {
    const runId = await newRun(db);
    const id = await finished(db, runId, 'call-kept');
    await backdate(db, [id], 40);
    t.equal(await findRemovedCommand(db, id), null, 'not removed while its row is there');
    t.equal(await deleteExpiredCommands(db, 30 * DAY_MS, 100), 1);
    t.same(
      await findRemovedCommand(db, id),
      { runId, ownerUserId: 'user-k' },
      'its events say whose it was',
    );
    t.equal(await findRemovedCommand(db, 'never-was'), null);
    t.equal((await getCallRecord(db, runId, 'call-kept'))?.commandId, id, 'the key stays');
    await t.rejects(
      enqueueCommand(db, {
        id: uid('keep-again'),
        runId,
        ownerUserId: 'user-k',
        callId: 'call-kept',
        timeoutMs: 1000,
        request: { command: 'true' },
      }),
      { code: 'command_expired' },
    );
    const rows = await db.query(
      'select count(*)::int as n from workspace_command where run_id = $1',
      [runId],
    );
    t.equal(rows[0]!.n, 0, 'the repeat queued nothing');
  });

  t.test("deleting a run's rows takes its commands and audit events, no other run's", async (t) => {
    const gone = await newRun(db);
    const kept = await newRun(db);
    await finished(db, gone, 'k1');
    const keptId = await finished(db, kept);
    await deleteRunCommands(db, gone);
    await deleteRunAuditEvents(db, gone);
    t.same(await listAuditEvents(db, { runId: gone }), []);
    t.equal(await getCallRecord(db, gone, 'k1'), null);
    t.ok(await getCommand(db, keptId));
    t.ok((await listAuditEvents(db, { runId: kept })).length > 0);
  });

  t.test('audit events past retention go oldest first, in bounded batches', async (t) => {
    const runId = await newRun(db);
    let lastOld = 0;
    for (let i = 0; i < 5; i++) {
      lastOld = await insertAuditEvent(db, { eventType: 'test.old', runId });
    }
    const young = await insertAuditEvent(db, { eventType: 'test.young', runId });
    // Every event up to the last old one is aged (those of earlier subtests too).
    await db.execute(
      `update audit_event set created_at = created_at - interval '200 days' where id <= $1`,
      [lastOld],
    );
    const before = await db.query<{ n: number }>(
      'select count(*)::int as n from audit_event where id <= $1',
      [lastOld],
    );
    const n = before[0]!.n;
    t.equal(await deleteExpiredAuditEvents(db, 100 * DAY_MS, 3), Math.min(3, n), 'a batch bound');
    const swept = await sweepRetention(
      db,
      { commandKeepMs: 0, auditKeepMs: 100 * DAY_MS },
      { batchRows: 1_000 },
    );
    t.equal(swept.auditEventsDeleted, n - Math.min(3, n), 'the sweep takes the rest');
    const left = await listAuditEvents(db, { runId });
    t.same(
      left.map((e) => e.id),
      [young],
      'only the young event is left',
    );
  });
}
