import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { getCommand, listAuditEvents } from '../../src/store/index.js';
import { DurableMesh, okPayload } from '../support/durable-mesh.js';
import { eventually } from '../support/mesh.js';
import type { HarnessOutcome } from '../support/mesh-harness.js';
import { startPgCluster } from '../support/pg-cluster.js';

/**
 * An outage never rewrites an outcome. Two replicas, each running a command of its
 * own run with another queued behind it, on a Postgres cluster this test started. The
 * whole cluster is frozen (SIGSTOP of the postmaster and every backend) for longer
 * than the liveness window and the lease, so when it thaws every heartbeat and every
 * lease is old at once. One running command ends while the database is frozen, the
 * other after it thaws. Each keeps its true outcome (completed, its exit code, its
 * output, its files), nothing is recovered as lost, no workspace moves, and the queued
 * commands run after the pause on their own replicas. Real processes, the fs store.
 */

const LIVENESS_MS = 3000;
const LEASE_MS = 4000;
const PAUSE_MS = 10_000;

const slow = (name: string) =>
  `touch started; while [ ! -e go ]; do sleep 0.05; done; echo out-${name}; echo made-${name} > made-${name}.txt; exit 3`;

t.test('a database pause rewrites no outcome, on the replica that ran it too', async (t) => {
  const cluster = await startPgCluster();
  // Teardowns run last-in first-out: the cluster stops after the mesh dropped its database.
  t.teardown(() => cluster.stop());
  const mesh = await DurableMesh.start(t, {
    store: 'fs',
    serverUrl: cluster.url(),
    env: {
      MEMQL_NODE_LIVENESS_MS: String(LIVENESS_MS),
      MEMQL_COMMAND_LEASE_MS: String(LEASE_MS),
      MEMQL_COMMAND_CONCURRENCY: '1',
    },
  });
  const runs = {
    a: await mesh.run('run-pause-a', 'wb-a'),
    b: await mesh.run('run-pause-b', 'wb-b'),
  };
  const dirOf = (k: 'a' | 'b') => join(mesh.workbenchRoot(`wb-${k}`), runs[k]);
  const commandsOf = async (runId: string) =>
    (
      await mesh.db.query<{ id: string; status: string }>(
        'select id, status from workspace_command where run_id = $1 order by queued_at',
        [runId],
      )
    ).map((r) => r);

  const calls: Record<string, Promise<HarnessOutcome>> = {};
  for (const k of ['a', 'b'] as const) {
    okPayload(t, await mesh.dispatch(runs[k], 'fs_write', { path: 'x', content: k }), k);
    calls[`${k}1`] = mesh.dispatch(runs[k], 'exec', { command: slow(k) }, { callId: `${k}1` });
    await eventually(`the command on wb-${k} is under way`, () =>
      stat(join(dirOf(k), 'started')).then(
        () => true,
        () => false,
      ),
    );
    // The replica's one slot is taken: this one waits in the queue.
    calls[`${k}2`] = mesh.dispatch(
      runs[k],
      'exec',
      { command: `echo second-${k} > second-${k}.txt` },
      { callId: `${k}2` },
    );
    await eventually(`a command of run ${k} waits in the queue`, async () => {
      const rows = await commandsOf(runs[k]);
      return rows.length === 2 && rows[1]?.status === 'queued';
    });
  }
  const ids: Record<string, string> = {};
  for (const k of ['a', 'b'] as const) {
    const rows = await commandsOf(runs[k]);
    ids[`${k}1`] = rows[0]!.id;
    ids[`${k}2`] = rows[1]!.id;
  }

  const frozen = await cluster.pause();
  t.ok(frozen.length > 1, `the postmaster and its backends are frozen (${frozen.length} pids)`);
  const pausedAt = Date.now();
  // wb-a's command ends while no statement can reach the database.
  await writeFile(join(dirOf('a'), 'go'), '');
  await eventually(
    'the pause outlasts the liveness window and the lease',
    () => Date.now() - pausedAt >= PAUSE_MS,
    PAUSE_MS + 5_000,
    100,
  );
  cluster.resume();
  // wb-b's command, whose lease lapsed during the pause, ends after it.
  await writeFile(join(dirOf('b'), 'go'), '');

  await eventually(
    'every command ends',
    async () => {
      const rows = await mesh.db.query<{ n: number }>(
        `select count(*)::int as n from workspace_command where status in ('queued', 'running')`,
      );
      return Number(rows[0]?.n) === 0;
    },
    90_000,
    200,
  );

  for (const k of ['a', 'b'] as const) {
    const ran = await getCommand(mesh.db, ids[`${k}1`]!);
    t.match(
      ran,
      { status: 'completed', exitCode: 3, errorCode: null, errorCategory: null },
      `wb-${k}'s command keeps its true outcome`,
    );
    t.equal(ran?.stdout?.toString(), `out-${k}\n`);
    const queued = await getCommand(mesh.db, ids[`${k}2`]!);
    t.match(queued, { status: 'completed', exitCode: 0 }, `the queued one on run ${k} ran after`);
    for (const id of [ids[`${k}1`]!, ids[`${k}2`]!]) {
      const events = (await listAuditEvents(mesh.db, { commandId: id })).map((e) => e.eventType);
      t.notOk(events.includes('workspace_command.recovered_stale'), `${id}: never recovered`);
      t.equal(events.at(-1), 'workspace_command.completed');
    }
    // The answer its caller got: the outcome, or (while it could not be recorded) that
    // it will be; never that it was lost.
    const answer = (await calls[`${k}1`]!).result;
    if (answer.ok) t.match(answer.payload, { exitCode: 3, stdout: `out-${k}\n` });
    else t.match(answer, { errorCode: 'unavailable', payload: { outcomePending: true } });
    t.match(okPayload(t, await calls[`${k}2`]!, `${k}2`), { exitCode: 0 });
    // The callId replays the recorded outcome.
    const replay = await mesh.dispatch(runs[k], 'exec', { command: slow(k) }, { callId: `${k}1` });
    t.match(okPayload(t, replay, 'replay'), { exitCode: 3, stdout: `out-${k}\n` });
    for (const path of [`made-${k}.txt`, `second-${k}.txt`]) {
      const read = await mesh.dispatch(runs[k], 'fs_read', { path });
      t.match(okPayload(t, read, path), { content: `${path.split('.')[0]}\n` }, `${path} kept`);
    }
    t.same(
      (await mesh.rows(runs[k])).map((r) => [r.node_id, r.status, r.generation]),
      [[`wb-${k}`, 'provisioned', 1]],
      `run ${k}'s workspace never moved`,
    );
  }
  const lost = await mesh.db.query<{ n: number }>(
    `select count(*)::int as n from workspace_command
     where error_code = 'command_lost' or error_category = 'recovered_stale'`,
  );
  t.equal(Number(lost[0]?.n), 0, 'nothing was recorded as lost');
  t.same(await mesh.stop(), { 'wb-a': 0, 'wb-b': 0 });
});
