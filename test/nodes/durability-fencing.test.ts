import { createHash, randomUUID } from 'node:crypto';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import {
  enqueueCommand,
  getCommand,
  getLiveWorkspace,
  listAuditEvents,
  listFileConflicts,
} from '../../src/store/index.js';
import { DurableMesh, okPayload } from '../support/durable-mesh.js';
import { eventually } from '../support/mesh.js';

/**
 * A zombie holder cannot corrupt the workspace. The holder is frozen (SIGSTOP) in the
 * middle of a command; the agent stops seeing it and routes the run's calls to the
 * other replica, which takes the workspace over at the next generation and writes.
 * Then the zombie wakes (SIGCONT), finishes its command and syncs from its old copy:
 * its own changes are merged in, but nothing the new holder committed is deleted or
 * overwritten, and where both changed a path the new holder's version stays and the
 * zombie's is recorded as a conflict. Real processes, real Postgres, the s3 store.
 */

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

t.test('a zombie holder merges its own changes and loses every conflict', async (t) => {
  // Long windows: the frozen node still counts as live, so nothing recovers its command
  // and only the agent's view moves the workspace (a takeover of an unreachable node).
  const mesh = await DurableMesh.start(t, {
    store: 's3',
    env: { MEMQL_COMMAND_LEASE_MS: '120000', MEMQL_NODE_LIVENESS_MS: '120000' },
  });
  const run = await mesh.run('run-zombie', 'wb-a');
  for (const [path, content] of [
    ['shared.txt', 'v0'],
    ['keep.txt', 'k'],
    ['both.txt', 'v0'],
  ]) {
    okPayload(t, await mesh.dispatch(run, 'fs_write', { path: path!, content }), path!);
  }
  const live = await getLiveWorkspace(mesh.db, run);
  t.equal(live?.generation, 1);

  // Queued straight into the table: no caller waits on it, so nothing cancels it while
  // its node is frozen. The holder claims it.
  const { command } = await enqueueCommand(mesh.db, {
    id: randomUUID(),
    runId: run,
    workspaceId: live!.id,
    ownerUserId: 'alice',
    request: {
      command:
        'echo started > started.txt; while [ ! -e go ]; do sleep 0.05; done; ' +
        'echo zombie > z.txt; echo zombie > shared.txt; rm keep.txt both.txt',
    },
    timeoutMs: 300_000,
  });
  await eventually('the holder runs it', async () => {
    const c = await getCommand(mesh.db, command.id);
    return c?.status === 'running';
  });
  const zombie = mesh.replica('wb-a');
  // Under way, not only claimed: its first file is there (a node frozen between the
  // claim and the start would find the workspace taken over, and run nothing).
  await eventually('the command is under way', () =>
    stat(join(mesh.workbenchRoot('wb-a'), run, 'started.txt')).then(
      () => true,
      () => false,
    ),
  );
  process.kill(zombie.proc.child.pid!, 'SIGSTOP');
  t.teardown(() => {
    if (zombie.proc.alive) process.kill(zombie.proc.child.pid!, 'SIGCONT');
  });
  await eventually(
    'the agent stops seeing the frozen holder',
    async () => (await mesh.agent.peers()).some((p) => p.nodeId === 'wb-a' && !p.healthy),
    30_000,
  );

  const writes: [string, string][] = [
    ['b.txt', 'from-b'],
    ['shared.txt', 'from-b'],
    ['both.txt', 'from-b'],
  ];
  for (const [path, content] of writes) {
    const w = await mesh.dispatch(run, 'fs_write', { path, content });
    okPayload(t, w, `${path} on the new holder`);
    t.match(w.route, { nodeId: 'wb-b' });
  }
  const rows = await mesh.rows(run);
  t.same(
    rows.map((r) => [r.node_id, r.status, r.released_reason, r.generation]),
    [
      ['wb-a', 'released', 'node_lost', 1],
      ['wb-b', 'provisioned', null, 2],
    ],
    'taken over at the next generation',
  );

  // Let the zombie's command end: it reads its own (stale) copy, so the release file
  // goes into that directory.
  await writeFile(join(mesh.workbenchRoot('wb-a'), run, 'go'), '');
  process.kill(zombie.proc.child.pid!, 'SIGCONT');
  await eventually(
    'the zombie records its command',
    async () => (await getCommand(mesh.db, command.id))?.status === 'completed',
    60_000,
  );
  t.match(await getCommand(mesh.db, command.id), { status: 'completed', exitCode: 0 });

  const read = async (path: string) => mesh.dispatch(run, 'fs_read', { path });
  t.match(okPayload(t, await read('b.txt'), 'b.txt'), { content: 'from-b' }, 'not deleted');
  t.match(
    okPayload(t, await read('shared.txt'), 'shared.txt'),
    { content: 'from-b' },
    'the new holder wins the conflict',
  );
  t.match(
    okPayload(t, await read('both.txt'), 'both.txt'),
    { content: 'from-b' },
    'a deletion by the zombie does not remove what the holder wrote',
  );
  t.match(okPayload(t, await read('z.txt'), 'z.txt'), { content: 'zombie\n' }, 'its own file');
  t.match(okPayload(t, await read('started.txt'), 'started'), { content: 'started\n' });
  t.match(
    (await read('keep.txt')).result,
    { ok: false, errorCode: 'path_not_found' },
    'its own deletion of a file nobody else touched is kept',
  );
  t.match((await read('go')).result, { ok: true }, 'the release file came through its sync too');

  const conflicts = await listFileConflicts(mesh.db, run);
  t.same(
    conflicts.map((c) => [c.path, c.side, c.hash, c.committerNodeId, c.committerGeneration]).sort(),
    [
      ['both.txt', 'committer', null, 'wb-a', 1],
      ['shared.txt', 'committer', sha256('zombie\n'), 'wb-a', 1],
    ],
    "the zombie's losing sides are recorded",
  );
  const events = (await listAuditEvents(mesh.db, { runId: run })).map((e) => e.eventType);
  t.ok(events.includes('workspace.sync_conflict'));
  t.ok(
    zombie.proc.lines.some(
      (l) => l.msg.startsWith('workspace manifest moved') && l.holder === false,
    ),
    'the zombie knew it no longer held the workspace',
  );
  t.same(await mesh.stop(), { 'wb-a': 0, 'wb-b': 0 });
});
