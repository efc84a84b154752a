import t from 'tap';
import type { ExecPayload } from '../../src/contract/index.js';
import { imageWithoutNpm } from '../support/build-images.js';
import { DurableMesh, okPayload } from '../support/durable-mesh.js';
import { eventually } from '../support/mesh.js';
import { PACKAGE_LOCK, packageJson } from '../workbench/build-suite.js';

/**
 * Where builds go, with one agent and two workbench processes on a real Postgres: wb-a
 * runs its commands on the docker runner in an image without npm, wb-b on bwrap over
 * this machine's /usr (node, npm, git). Each probes its sandbox at start and reports
 * what it found in its Health frames.
 *
 * A build of a run held by wb-a goes to wb-b, which takes the workspace over (fenced);
 * wb-a never runs it. wb-b is then killed: the build's outputs are in the workspace of
 * wb-a, which takes the run over in turn. Alone, wb-a refuses every build with
 * build_unavailable, naming npm, before anything is forwarded.
 */

t.setTimeout(300_000);
const noNpm = await imageWithoutNpm();

t.test('builds go only where they can run; outputs survive a takeover', async (t) => {
  const mesh = await DurableMesh.start(t, {
    store: 'fs',
    env: { MEMQL_EXEC_MAX_TIMEOUT_MS: '240000' },
    replicaEnv: (nodeId): Record<string, string> =>
      nodeId === 'wb-a'
        ? { MEMQL_RUNNER: 'docker', MEMQL_RUNNER_IMAGE: noNpm }
        : { MEMQL_RUNNER: 'bwrap' },
  });
  await eventually(
    'both replicas report their toolchains',
    async () => {
      const peers = await mesh.agent.peers();
      const of = (id: string) => peers.find((p) => p.nodeId === id)?.toolchain;
      return of('wb-a') !== undefined && of('wb-b') !== undefined;
    },
    120_000,
  );
  const peers = await mesh.agent.peers();
  t.same(
    Object.fromEntries(peers.map((p) => [p.nodeId, p.toolchain])),
    {
      'wb-a': { status: 'probed', missing: ['npm'] },
      'wb-b': { status: 'probed', missing: [] },
    },
    'what each replica reported',
  );

  const run = await mesh.run('run-build', 'wb-a');
  for (const [path, content] of [
    ['package.json', packageJson('built')],
    ['package-lock.json', PACKAGE_LOCK],
  ] as const) {
    const w = await mesh.dispatch(run, 'fs_write', { path, content });
    t.match(w.route, { nodeId: 'wb-a', pick: 'pinned' }, `${path} is written on the holder`);
  }

  const built = await mesh.dispatch(run, 'build', {}, { subject: 'system:deploy' });
  t.match(built.route, {
    kind: 'remote',
    nodeId: 'wb-b',
    pick: 'substitute',
    previousNodeId: 'wb-a',
  });
  const out = okPayload<ExecPayload>(t, built, 'the build');
  t.equal(out.exitCode, 0, out.stderr);
  t.match(built.output.join(''), /> pkg@1\.0\.0 build/, 'its output arrived live');
  t.same(
    (await mesh.rows(run)).map((r) => [r.node_id, r.status, r.released_reason]),
    [
      ['wb-a', 'released', 'node_lost'],
      ['wb-b', 'provisioned', null],
    ],
    'wb-b took the workspace over, fenced at the next generation',
  );
  const ranOn = [...mesh.replicas.values()]
    .filter((wb) =>
      wb.proc.lines.some(
        (l) => l.msg === 'workspace_command.running' && l.commandId === out.commandId,
      ),
    )
    .map((wb) => wb.nodeId);
  t.same(ranOn, ['wb-b'], 'the replica without npm never ran it');

  // wb-b is lost: the run moves back to wb-a, with the build's outputs.
  await mesh.replica('wb-b').proc.stop('SIGKILL');
  await eventually('the agent sees wb-b gone', async () => {
    const now = await mesh.agent.peers();
    return !now.some((p) => p.nodeId === 'wb-b' && p.healthy);
  });
  const read = await mesh.dispatch(run, 'fs_read', { path: 'dist/out.txt' });
  t.match(read.route, { nodeId: 'wb-a', pick: 'substitute', previousNodeId: 'wb-b' });
  t.match(okPayload(t, read, 'dist/out.txt after the takeover'), { content: 'built' });
  t.equal(await mesh.holder(run), 'wb-a');

  // Alone, the replica without npm gets no build: refused before forwarding.
  const refused = await mesh.dispatch(run, 'build', {}, { subject: 'system:deploy' });
  t.match(refused, {
    result: { ok: false, errorCode: 'build_unavailable' },
    route: { kind: 'refused' },
  });
  if (!refused.result.ok) {
    t.match(refused.result.message, 'wb-a lacks npm');
    t.same(refused.result.payload, {
      replicas: [{ nodeId: 'wb-a', missing: ['npm'], problem: 'missing_tools' }],
    });
  }
  const commands = await mesh.db.query<{ n: number }>(
    'select count(*)::int as n from workspace_command where run_id = $1',
    [run],
  );
  t.equal(commands[0]?.n, 1, 'the refused build queued nothing');

  // A user can never build, whatever the replicas can do.
  const user = await mesh.dispatch(run, 'build', {});
  t.match(user.result, { ok: false, errorCode: 'build_not_permitted' });

  t.same(await mesh.stop(), { 'wb-a': 0 }, 'the remaining replica drains and exits 0');
});
