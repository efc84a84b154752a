import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { getCommand, listAuditEvents } from '../../src/store/index.js';
import { DurableMesh, okPayload } from '../support/durable-mesh.js';
import { eventually } from '../support/mesh.js';

/**
 * A callId replayed after its replica was killed answers from the record, within the
 * command's lease: the other replica sees the dead node's worker go silent, ends its
 * command as `command_lost`, and says a new callId is needed to run it again. The
 * lease here is ten minutes, so only the dead worker's silence can end it in time.
 * Real processes, real Postgres, the fs store.
 */

t.test('a callId replay after a replica is killed answers command_lost in time', async (t) => {
  const mesh = await DurableMesh.start(t, {
    store: 'fs',
    env: { MEMQL_NODE_LIVENESS_MS: '2000', MEMQL_COMMAND_LEASE_MS: '600000' },
  });
  const run = await mesh.run('run-replay', 'wb-a');
  // Runs until `started` is gone: the process runner's child outlives the killed node,
  // and ends once the test removes the file (or the whole directory at teardown).
  const command = 'touch started; while [ -e started ]; do sleep 0.1; done';
  // The call, as it is repeated below: the same action and arguments under its key.
  const args = { command, timeoutMs: 600_000 };
  const first = mesh.dispatch(run, 'exec', args, { callId: 'c1' });
  await eventually('the command is under way', () =>
    stat(join(mesh.workbenchRoot('wb-a'), run, 'started')).then(
      () => true,
      () => false,
    ),
  );
  const [row] = await mesh.db.query<{ id: string; lease_expires_at: Date }>(
    'select id, lease_expires_at from workspace_command where run_id = $1',
    [run],
  );
  const commandId = row!.id;

  await mesh.replica('wb-a').proc.stop('SIGKILL');
  t.teardown(() => rm(join(mesh.workbenchRoot('wb-a'), run, 'started'), { force: true }));
  const gone = await first;
  t.match(gone.result, { ok: false, errorCode: 'unavailable' });
  t.match(
    gone.result.ok ? '' : gone.result.message,
    'same callId',
    'the answer says how to get the outcome',
  );

  const replay = await mesh.dispatch(run, 'exec', args, { callId: 'c1' });
  t.match(replay.route, { nodeId: 'wb-b' });
  t.match(replay.result, {
    ok: false,
    errorCode: 'command_lost',
    payload: { commandId, retry: 'new_call_id' },
  });
  t.match(replay.result.ok ? '' : replay.result.message, 'new callId');
  const lost = await getCommand(mesh.db, commandId);
  t.match(lost, { status: 'failed', errorCode: 'command_lost', errorCategory: 'recovered_stale' });
  t.ok(
    lost!.finishedAt!.getTime() < new Date(row!.lease_expires_at).getTime(),
    'ended from the dead worker, long before its lease would have lapsed',
  );
  t.same(
    (await listAuditEvents(mesh.db, { commandId })).map((e) => e.eventType),
    ['workspace_command.queued', 'workspace_command.running', 'workspace_command.recovered_stale'],
  );

  const again = await mesh.dispatch(run, 'exec', args, { callId: 'c1' });
  t.match(
    again.result,
    { ok: false, errorCode: 'command_lost' },
    'the same callId, the same answer',
  );
  const fresh = await mesh.dispatch(run, 'exec', { command: 'echo again' }, { callId: 'c2' });
  t.match(okPayload(t, fresh, 'a new callId'), { exitCode: 0, stdout: 'again\n' });
  t.same(await mesh.stop(), { 'wb-b': 0 });
});
