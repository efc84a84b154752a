import t, { type Test } from 'tap';
import { listAuditEvents } from '../../src/store/index.js';
import { DurableMesh, okPayload } from '../support/durable-mesh.js';
import { eventually } from '../support/mesh.js';

/**
 * A run's commands stay with the replica holding its workspace, however long they
 * wait there for a slot; files written meanwhile are never deleted by another
 * replica's copy. One agent and two workbench processes on a real Postgres, with the
 * filesystem object store and with s3rver.
 *
 * The holder has one slot, taken by another run's long command; the run's own
 * command waits behind it past any "left behind" time, and while it runs, ten writes
 * to the same run are acknowledged. Every one of them must survive.
 */

async function commandStatus(mesh: DurableMesh, runId: string): Promise<string | null> {
  const rows = await mesh.db.query<{ status: string }>(
    'select status from workspace_command where run_id = $1 order by queued_at desc limit 1',
    [runId],
  );
  return rows[0]?.status ?? null;
}

async function scenario(t: Test, store: 'fs' | 's3') {
  const mesh = await DurableMesh.start(t, {
    store,
    env: { MEMQL_COMMAND_CONCURRENCY: '1', MEMQL_QUEUE_POLL_INTERVAL_MS: '100' },
  });
  const busy = await mesh.run('run-busy', 'wb-a');
  const run = await mesh.run('run-r', 'wb-a');
  await mesh.dispatch(run, 'fs_write', { path: 'before.txt', content: 'written first' });

  // The holder's one slot: another run's command, long enough that a queue which lets
  // other replicas take waiting work would hand the run's command to wb-b.
  const blocker = mesh.dispatch(busy, 'exec', { command: 'sleep 7' });
  await eventually('the blocker runs', async () => (await commandStatus(mesh, busy)) === 'running');
  const command = mesh.dispatch(run, 'exec', {
    command: 'sleep 2; ls > listing.txt; echo done > cmd.txt',
    timeoutMs: 60_000,
  });
  await eventually(
    "the run's command runs",
    async () => (await commandStatus(mesh, run)) === 'running',
    60_000,
  );
  // Written while the command runs: acknowledged, so never to be lost.
  const writes = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      mesh.dispatch(run, 'fs_write', { path: `acked/w${i}.txt`, content: `write ${i}` }),
    ),
  );
  const acked = writes.filter((w) => w.result.ok).length;
  t.equal(acked, 10, 'all ten writes were acknowledged');
  const cmd = await command;
  t.match(okPayload(t, cmd, 'the command'), { exitCode: 0 });
  t.match(okPayload(t, await blocker, 'the blocker'), { exitCode: 0 });

  for (let i = 0; i < 10; i++) {
    const read = await mesh.dispatch(run, 'fs_read', { path: `acked/w${i}.txt` });
    t.match(okPayload(t, read, `acked/w${i}.txt`), { content: `write ${i}` });
  }
  const done = await mesh.dispatch(run, 'fs_read', { path: 'cmd.txt' });
  t.match(okPayload(t, done, 'cmd.txt'), { content: 'done\n' }, "the command's own file too");
  const before = await mesh.dispatch(run, 'fs_read', { path: 'before.txt' });
  t.match(okPayload(t, before, 'before.txt'), { content: 'written first' });

  const commandId = okPayload<{ commandId: string }>(t, cmd, 'command').commandId;
  const ranOn = [...mesh.replicas.values()]
    .filter((wb) =>
      wb.proc.lines.some((l) => l.msg === 'workspace_command.running' && l.commandId === commandId),
    )
    .map((wb) => wb.nodeId);
  t.same(ranOn, ['wb-a'], 'it ran on the holder, where it waited for the slot');
  t.same(
    (await mesh.rows(run)).map((r) => [r.node_id, r.status]),
    [['wb-a', 'provisioned']],
    'the workspace never moved',
  );
  const events = await listAuditEvents(mesh.db, { runId: run });
  t.notOk(
    events.some((e) => e.eventType === 'workspace.sync_conflict'),
    'no conflicting writers',
  );
  t.same(await mesh.stop(), { 'wb-a': 0, 'wb-b': 0 }, 'both replicas drain and exit 0');
}

t.test('filesystem object store', (t) => scenario(t, 'fs'));
t.test('s3 object store', (t) => scenario(t, 's3'));
