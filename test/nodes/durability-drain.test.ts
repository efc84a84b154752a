import t, { type Test } from 'tap';
import { listAuditEvents } from '../../src/store/index.js';
import { DurableMesh, okPayload } from '../support/durable-mesh.js';
import { eventually } from '../support/mesh.js';

/**
 * A graceful drain (SIGTERM) loses nothing and takes nothing over: the draining
 * replica finishes its command, hands the workspace off, and a call that arrived for
 * the run meanwhile is served by the other replica after the handoff. A command cut
 * off at the grace answers `node_stopping`, and what it wrote until then is kept.
 * One agent and two workbench processes on a real Postgres, fs and S3 stores.
 */

async function commandStatus(mesh: DurableMesh, runId: string): Promise<string | null> {
  const rows = await mesh.db.query<{ status: string }>(
    'select status from workspace_command where run_id = $1 order by queued_at desc limit 1',
    [runId],
  );
  return rows[0]?.status ?? null;
}

async function untilUnhealthy(mesh: DurableMesh, nodeId: string): Promise<void> {
  await eventually(`the agent sees ${nodeId} drain`, async () =>
    (await mesh.agent.peers()).some((p) => p.nodeId === nodeId && !p.healthy),
  );
}

async function scenario(t: Test, store: 'fs' | 's3') {
  const mesh = await DurableMesh.start(t, { store, args: ['--shutdown-grace-ms=10000'] });

  await t.test('a drain finishes the command, then hands the workspace off', async (t) => {
    const run = await mesh.run('run-drain', 'wb-a');
    t.ok(
      okPayload(
        t,
        await mesh.dispatch(run, 'fs_write', { path: 'before.txt', content: 'b' }),
        'before',
      ),
    );
    const command = mesh.dispatch(run, 'exec', { command: 'sleep 1; echo from-cmd > cmd.txt' });
    await eventually(
      'the command runs',
      async () => (await commandStatus(mesh, run)) === 'running',
    );
    const draining = mesh.replica('wb-a');
    draining.proc.child.kill('SIGTERM');
    await untilUnhealthy(mesh, 'wb-a');

    // Arrives while wb-a drains: served by wb-b once wb-a has handed the run over.
    const during = await mesh.dispatch(run, 'fs_write', { path: 'during.txt', content: 'd' });
    okPayload(t, during, 'a write during the drain');
    t.match(during.route, { kind: 'remote', nodeId: 'wb-b' });
    t.match(okPayload(t, await command, 'the command'), { exitCode: 0 }, 'the command finished');
    t.equal((await draining.proc.exited).code, 0, 'the drained replica exits 0');

    for (const [path, content] of [
      ['before.txt', 'b'],
      ['during.txt', 'd'],
      ['cmd.txt', 'from-cmd\n'],
    ]) {
      const read = await mesh.dispatch(run, 'fs_read', { path: path! });
      t.match(okPayload(t, read, path!), { content }, `${path} is there`);
    }
    t.same(
      (await mesh.rows(run)).map((r) => [r.node_id, r.status, r.released_reason, r.generation]),
      [
        ['wb-a', 'released', 'handed_off', 1],
        ['wb-b', 'provisioned', null, 2],
      ],
      'handed off, not taken over',
    );
    const events = (await listAuditEvents(mesh.db, { runId: run })).map((e) => e.eventType);
    t.ok(events.includes('workspace.handed_off'));
    t.notOk(events.includes('workspace.taken_over'), 'no takeover, no node_lost');
    await mesh.restart('wb-a');
    await mesh.untilHealthy(['wb-a', 'wb-b']);
  });

  await t.test('a command cut off at the grace answers node_stopping', async (t) => {
    const run = await mesh.run('run-cut', 'wb-b');
    const command = mesh.dispatch(run, 'exec', {
      command: 'echo begun > begun.txt; sleep 60',
      timeoutMs: 120_000,
    });
    await eventually(
      'the command runs',
      async () => (await commandStatus(mesh, run)) === 'running',
    );
    const stopping = mesh.replica('wb-b');
    stopping.proc.child.kill('SIGTERM');
    const answer = await command;
    t.equal(answer.result.ok, false);
    t.match(
      answer.result,
      { errorCode: 'node_stopping', payload: { commandId: String } },
      'the node stopping, not a plain cancel',
    );
    t.equal((await stopping.proc.exited).code, 0);
    const rows = await mesh.db.query<{ status: string; error_code: string }>(
      'select status, error_code from workspace_command where run_id = $1',
      [run],
    );
    t.same(rows, [{ status: 'failed', error_code: 'node_stopping' }], 'recorded, not left running');
    const begun = await mesh.dispatch(run, 'fs_read', { path: 'begun.txt' });
    t.match(okPayload(t, begun, 'begun.txt'), { content: 'begun\n' }, 'what it wrote is kept');
    t.match(begun.route, { nodeId: 'wb-a' });
    t.same(
      (await mesh.rows(run)).map((r) => [r.node_id, r.released_reason]),
      [
        ['wb-b', 'handed_off'],
        ['wb-a', null],
      ],
    );
  });

  t.same(await mesh.stop(), { 'wb-a': 0 });
}

t.test('filesystem object store', (t) => scenario(t, 'fs'));
t.test('s3 object store', (t) => scenario(t, 's3'));
