import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { getCommand, listAuditEvents } from '../../src/store/index.js';
import { DurableMesh, okPayload } from '../support/durable-mesh.js';
import { eventually } from '../support/mesh.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

/**
 * A command that ran keeps its true outcome through a database outage. Both replicas
 * reach Postgres through a proxy the test cuts; a command finishes while it is cut.
 * Its caller hears `unavailable` saying the outcome will be recorded and how to read
 * it (never "could not run"); once Postgres is back the node records the real outcome
 * and syncs the command's files, and no replica mistakes the outage for its peers'
 * deaths (nothing is recovered as lost). Real processes, real Postgres, the fs store.
 */

const LIVENESS_MS = 3000;

t.test('an outcome survives a database outage longer than the liveness window', async (t) => {
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
  t.teardown(() => proxy.close());
  const mesh = await DurableMesh.start(t, {
    store: 'fs',
    env: { MEMQL_NODE_LIVENESS_MS: String(LIVENESS_MS), MEMQL_COMMAND_LEASE_MS: '60000' },
    replicaDatabaseUrl: (url) => {
      const u = new URL(url);
      u.port = String(proxy.port);
      return u.toString();
    },
  });
  const run = await mesh.run('run-outage', 'wb-a');
  okPayload(t, await mesh.dispatch(run, 'fs_write', { path: 'before.txt', content: 'b' }), 'b');

  const command =
    'touch started; while [ ! -e go ]; do sleep 0.05; done; echo out; echo made > made.txt';
  const call = mesh.dispatch(run, 'exec', { command }, { callId: 'outage-call' });
  const dir = join(mesh.workbenchRoot('wb-a'), run);
  await eventually('the command is under way', () =>
    stat(join(dir, 'started')).then(
      () => true,
      () => false,
    ),
  );
  const rows = await mesh.db.query<{ id: string }>(
    'select id from workspace_command where run_id = $1',
    [run],
  );
  const commandId = rows[0]!.id;

  proxy.cut();
  const cutAt = Date.now();
  // The command finishes while no replica can reach the database.
  await writeFile(join(dir, 'go'), '');
  const answer = await call;
  if (answer.result.ok) {
    t.fail('the outcome cannot have been recorded while the database was cut');
  } else {
    t.equal(answer.result.errorCode, 'unavailable');
    const wbA = mesh.replicas.get('wb-a');
    t.ok(wbA?.proc.alive, `wb-a is still running; stderr: ${wbA?.proc.stderr.slice(-3000)}`);
    t.match(answer.result.payload, { commandId, outcomePending: true, exitCode: 0 });
    t.notMatch(
      answer.result.message,
      'could not run',
      'never "could not run" for a command that ran',
    );
    t.match(answer.result.message, `GET /v1/commands/${commandId}`, 'says how to read it');
  }
  // Longer than the liveness window: every worker's heartbeat is old when it ends.
  await eventually(
    'the outage outlasts the liveness window',
    () => Date.now() - cutAt > 2 * LIVENESS_MS,
  );
  proxy.restore();

  await eventually(
    'the real outcome is recorded',
    async () => (await getCommand(mesh.db, commandId))?.status !== 'running',
    60_000,
  );
  const row = await getCommand(mesh.db, commandId);
  t.match(row, { status: 'completed', exitCode: 0, errorCode: null });
  t.equal(row?.stdout?.toString(), 'out\n');
  const events = (await listAuditEvents(mesh.db, { commandId })).map((e) => e.eventType);
  t.same(
    events,
    ['workspace_command.queued', 'workspace_command.running', 'workspace_command.completed'],
    'not recovered as lost',
  );

  // The callId replays the recorded outcome.
  const replay = await mesh.dispatch(run, 'exec', { command }, { callId: 'outage-call' });
  t.match(okPayload(t, replay, 'replay'), { commandId, exitCode: 0, stdout: 'out\n' });

  // Its files are durable: the holder is killed, and the other replica serves them.
  await mesh.replica('wb-a').proc.stop('SIGKILL');
  const made = await mesh.dispatch(run, 'fs_read', { path: 'made.txt' });
  t.match(okPayload(t, made, 'made.txt'), { content: 'made\n' });
  t.match(made.route, { nodeId: 'wb-b' });
  t.same(await mesh.stop(), { 'wb-b': 0 });
});
