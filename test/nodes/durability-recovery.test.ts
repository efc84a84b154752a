import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { getCommand, listAuditEvents } from '../../src/store/index.js';
import { DurableMesh } from '../support/durable-mesh.js';
import { eventually } from '../support/mesh.js';

/**
 * A killed replica's running command reaches a terminal row within one liveness
 * window plus one recovery period of its last heartbeat, while the survivors are
 * young: they were restarted seconds before the kill, and go on being restarted one
 * after the other (a rolling update) after it, so none is ever up for two liveness
 * windows. The bound is checked on the database's own timestamps: the killed worker's
 * last heartbeat and the command's finish. Three replicas as real processes, SIGKILL,
 * real Postgres, the fs store.
 */

const LIVENESS_MS = 5000;
/** Default period of stale recovery: half of `min(lease, liveness)`. */
const RECOVERY_PERIOD_MS = LIVENESS_MS / 2;

t.test('a killed replica’s command ends within the bound while survivors restart', async (t) => {
  const mesh = await DurableMesh.start(t, {
    store: 'fs',
    nodes: ['wb-a', 'wb-b', 'wb-c'],
    // A long lease: only the dead worker's silence can end its command in time.
    env: { MEMQL_NODE_LIVENESS_MS: String(LIVENESS_MS), MEMQL_COMMAND_LEASE_MS: '600000' },
  });
  const survivors = ['wb-b', 'wb-c'];
  /** A rolling update's step: the survivor stops (SIGTERM) and starts again. */
  const restart = async (nodeId: string) => {
    await mesh.replica(nodeId).proc.stop('SIGTERM', 60_000);
    await mesh.restart(nodeId);
    await mesh.untilHealthy(survivors);
  };
  for (const nodeId of survivors) await restart(nodeId);

  const run = await mesh.run('run-kill', 'wb-a');
  const call = mesh
    .dispatch(run, 'exec', { command: 'touch started; sleep 600' })
    .catch((err: unknown) => err);
  await eventually('the command is under way on wb-a', () =>
    stat(join(mesh.workbenchRoot('wb-a'), run, 'started')).then(
      () => true,
      () => false,
    ),
  );
  const [row] = await mesh.db.query<{ id: string }>(
    'select id from workspace_command where run_id = $1',
    [run],
  );
  const commandId = row!.id;
  const running = await getCommand(mesh.db, commandId);
  t.match(running, { status: 'running' });
  const victim = running!.leaseOwner!;

  await mesh.replica('wb-a').proc.stop('SIGKILL');
  const killedAt = Date.now();
  // Survivors go on restarting, oldest first, until the command ends (or long past
  // what the old rule, two windows of one survivor's uptime, could ever reach).
  const ended = async () => (await getCommand(mesh.db, commandId))?.status !== 'running';
  let restarts = 0;
  while (!(await ended()) && Date.now() - killedAt < 4 * LIVENESS_MS) {
    await restart(survivors[restarts % 2]!);
    restarts += 1;
  }
  await eventually('the command reaches a terminal row', ended, 60_000, 100);
  await call;

  const end = await getCommand(mesh.db, commandId);
  t.match(end, { status: 'failed', errorCode: 'command_lost', errorCategory: 'recovered_stale' });
  const events = (await listAuditEvents(mesh.db, { commandId })).map((e) => e.eventType);
  t.equal(events.at(-1), 'workspace_command.recovered_stale');
  // The bound, on the database's clock: from the dead worker's last heartbeat to the
  // command's terminal row.
  const [times] = await mesh.db.query<{ ms: number }>(
    `select (extract(epoch from (c.finished_at - k.heartbeat_at)) * 1000)::float8 as ms
     from workspace_command c, workbench_worker k where c.id = $1 and k.lease_owner = $2`,
    [commandId, victim],
  );
  const recoveryMs = Number(times?.ms);
  t.comment(
    `recovered ${Math.round(recoveryMs)} ms after wb-a's last heartbeat; ${restarts} survivor restarts after the kill`,
  );
  t.ok(
    recoveryMs <= LIVENESS_MS + RECOVERY_PERIOD_MS + LIVENESS_MS / 2,
    `within one liveness window plus one recovery period, and half a window for a loaded machine (${Math.round(recoveryMs)} ms)`,
  );
  t.same(await mesh.stop(), { 'wb-b': 0, 'wb-c': 0 });
});
