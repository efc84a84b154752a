import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { getCommand } from '../../src/store/index.js';
import { DurableMesh, okPayload } from '../support/durable-mesh.js';
import { eventually } from '../support/mesh.js';

/**
 * A command outlives the agent node that forwarded it. The agent (a real process) is
 * killed with SIGKILL while the command runs on a replica; the replica sees the stream
 * go and leaves the command running; it completes, and a new agent process gets its
 * recorded outcome by repeating the call with its callId. Nothing runs twice. Rounds:
 * `MEMQL_TEST_AGENT_KILLS` (default 1).
 */

const ROUNDS = Number(process.env.MEMQL_TEST_AGENT_KILLS ?? 1);

/** Runs until `go` is written into the workspace's existing `gate` file. */
const command = (i: number) =>
  `echo started; until grep -q go gate; do sleep 0.05; done; echo finished ${i}`;

t.test('SIGKILL of the agent during an exec does not cancel the command', async (t) => {
  const mesh = await DurableMesh.start(t, { store: 'fs', nodes: ['wb-a'] });
  const run = await mesh.run('run-agent-kill', 'wb-a');
  const replica = mesh.replica('wb-a');
  const dir = join(mesh.workbenchRoot('wb-a'), run);
  const outcomes: string[] = [];
  for (let i = 1; i <= ROUNDS; i++) {
    const callId = `agent-kill-${i}`;
    okPayload(t, await mesh.dispatch(run, 'fs_write', { path: 'gate', content: 'wait\n' }), 'gate');
    const call = mesh.dispatch(run, 'exec', { command: command(i) }, { callId }).catch(() => null);
    let commandId = '';
    await eventually(`round ${i}: the command runs`, async () => {
      const rows = await mesh.db.query<{ id: string; status: string }>(
        'select id, status from workspace_command where run_id = $1 and call_id = $2',
        [run, callId],
      );
      commandId = rows[0]?.id ?? '';
      return rows[0]?.status === 'running';
    });
    const from = replica.proc.lines.length;
    await mesh.agent.proc.stop('SIGKILL');
    await call;
    // The replica has seen its caller's stream go before the command may end.
    await replica.proc.waitForLog((l) => l.msg === 'stream over', 60_000, from);
    await writeFile(join(dir, 'gate'), 'go\n');
    await eventually(
      `round ${i}: the command ended`,
      async () => {
        const row = await getCommand(mesh.db, commandId);
        return row !== null && row.status !== 'running' && row.status !== 'queued';
      },
      60_000,
    );
    const row = await getCommand(mesh.db, commandId);
    outcomes.push(row!.status);
    t.equal(row?.status, 'completed', `round ${i}: the agent's death did not cancel it`);
    t.equal(row?.cancelRequested, false);

    await mesh.restartAgent();
    const again = await mesh.dispatch(run, 'exec', { command: command(i) }, { callId });
    const payload = okPayload<{ commandId: string; stdout: string }>(t, again, 'replayed');
    t.equal(payload.commandId, commandId, `round ${i}: the new agent gets the recorded outcome`);
    t.equal(payload.stdout, `started\nfinished ${i}\n`);
  }
  const ran = await mesh.db.query('select 1 from workspace_command where run_id = $1', [run]);
  t.equal(ran.length, ROUNDS, 'one command per round: nothing ran twice');
  t.comment(`outcomes of ${ROUNDS} agent kills: ${outcomes.join(', ')}`);
  await mesh.stop();
});
