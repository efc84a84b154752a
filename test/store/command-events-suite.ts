import type { Test } from 'tap';
import { commandEventMetadata, commandEventMetadataSql } from '../../src/store/command-events.js';
import { COLUMNS, toCommand } from '../../src/store/command-row.js';
import {
  type Command,
  cancelCommand,
  claimCommands,
  claimNextCommand,
  createRun,
  type Db,
  enqueueCommand,
  finishCommand,
  listAuditEvents,
} from '../../src/store/index.js';
import { eventually } from '../queue/queue-support.js';
import { recoverAllStale, uid } from './store-suite.js';

/**
 * Every move of a command writes its audit event in its own statement, with the
 * metadata of the allow-list: the same on both drivers. `db` is migrated and owned by
 * the caller.
 */
export function commandEventsSuite(t: Test, db: Db): void {
  const newRun = () => createRun(db, { id: uid('run'), ownerUserId: 'user-a' });
  const enqueue = async (runId: string, over: { callId?: string } = {}) =>
    enqueueCommand(db, {
      id: uid('cmd'),
      runId,
      ownerUserId: 'user-a',
      timeoutMs: 1000,
      request: { command: 'echo secret-request' },
      ...over,
    });
  const events = async (commandId: string) =>
    (await listAuditEvents(db, { commandId })).map((e) => ({
      eventType: e.eventType,
      metadata: e.metadata,
    }));
  const drain = async () => {
    while (await claimNextCommand(db, 'drain', 60_000)) {}
  };

  t.test('command events: each move writes its event with the metadata of its row', async (t) => {
    await drain();
    const run = await newRun();
    const { command: queued } = await enqueue(run.id, { callId: 'call-1' });
    t.same(await events(queued.id), [
      { eventType: 'workspace_command.queued', metadata: commandEventMetadata(queued) },
    ]);
    const replay = await enqueue(run.id, { callId: 'call-1' });
    t.equal(replay.created, false);
    t.equal((await events(queued.id)).length, 1, 'a replay writes no event');

    const [running] = await claimCommands(db, 'worker-1', 60_000, 1);
    t.equal(running?.id, queued.id);
    const finished = await finishCommand(db, queued.id, 'worker-1', {
      status: 'timed_out',
      errorCode: 'command_timeout',
      errorCategory: 'command_timeout',
      stdout: Buffer.from('out put'),
      signal: 'SIGKILL',
      execDurationMs: 12.4,
    });
    t.equal(
      await finishCommand(db, queued.id, 'worker-1', { status: 'completed' }),
      null,
      'a second finish loses the compare-and-set',
    );
    t.same(await events(queued.id), [
      { eventType: 'workspace_command.queued', metadata: commandEventMetadata(queued) },
      { eventType: 'workspace_command.running', metadata: commandEventMetadata(running!) },
      { eventType: 'workspace_command.timed_out', metadata: commandEventMetadata(finished!) },
    ]);
    t.match((await events(queued.id))[2]?.metadata, { stdoutBytes: 7, signal: 'SIGKILL' });
    t.notMatch(JSON.stringify(await events(queued.id)), 'secret-request', 'no command text');

    const { command: other } = await enqueue(run.id);
    const cancelled = await cancelCommand(db, other.id);
    t.equal(cancelled.effect, 'cancelled');
    t.same((await events(other.id)).at(-1), {
      eventType: 'workspace_command.cancelled',
      metadata: commandEventMetadata(cancelled.command!),
    });

    const { command: lost } = await enqueue(run.id);
    await claimCommands(db, 'gone-worker', 1, 1);
    // A lease of 1 ms, recovered as of a second later: only this command is that stale.
    const recovered = await eventually(async () => {
      const rows = await recoverAllStale(db, new Date(Date.now() + 1000));
      return rows.find((r) => r.id === lost.id);
    });
    t.same((await events(lost.id)).at(-1), {
      eventType: 'workspace_command.recovered_stale',
      metadata: commandEventMetadata(recovered),
    });
    t.match(recovered, { status: 'failed', errorCategory: 'recovered_stale' });
  });

  t.test('command events: a claim of n takes the n oldest in one statement', async (t) => {
    await drain();
    const run = await newRun();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await enqueue(run.id)).command.id);
    const first = await claimCommands(db, 'worker-b', 60_000, 3);
    t.same(
      first.map((c) => c.id),
      ids.slice(0, 3),
      'the three oldest, oldest first',
    );
    t.ok(first.every((c) => c.status === 'running' && c.leaseOwner === 'worker-b'));
    const rest = await claimCommands(db, 'worker-b', 60_000, 10);
    t.same(
      rest.map((c) => c.id),
      ids.slice(3),
      'a larger limit takes what is left',
    );
    t.same(await claimCommands(db, 'worker-b', 60_000, 10), [], 'then nothing');
    const running = await listAuditEvents(db, { runId: run.id });
    const runningIds = running
      .filter((e) => e.eventType === 'workspace_command.running')
      .map((e) => e.commandId);
    t.same(runningIds, ids, 'one running event per claimed command, in queue order');
  });

  t.test(
    'command events: the SQL metadata is the TypeScript allow-list, on odd rows',
    async (t) => {
      const run = await newRun();
      const odd: Record<string, unknown>[] = [
        { signal: 'SIGKILL' },
        { signal: 'SIG KILL' },
        { signal: 'sigkill' },
        { signal: 'SIGKILL\n' },
        { signal: 'SIGABCDEFGHIJKL' },
        { signal: 'SIGRTMIN+3' },
        // Microseconds either side of a millisecond, and a start before the queueing.
        {
          queued_at: '2030-01-01 00:00:00.999999+00',
          started_at: '2030-01-01 00:00:01.000001+00',
          finished_at: '2030-01-01 00:00:03.123456+00',
        },
        { queued_at: '2030-01-01 00:00:05+00', started_at: '2030-01-01 00:00:04.5+00' },
        { stdout: Buffer.from([0, 1, 2]), stderr: Buffer.alloc(0), exec_duration_ms: 0 },
      ];
      for (const set of odd) {
        const { command } = await enqueue(run.id);
        const names = Object.keys(set);
        await db.execute(
          `update workspace_command set ${names.map((n, i) => `${n} = $${i + 2}`).join(', ')}
         where id = $1`,
          [command.id, ...Object.values(set)],
        );
        const [row] = await db.query(
          `select ${COLUMNS}, ${commandEventMetadataSql('c')} as md from workspace_command c
         where id = $1`,
          [command.id],
        );
        const decoded: Command = toCommand(row!);
        t.same(row!.md, commandEventMetadata(decoded), JSON.stringify(set));
      }
    },
  );
}
