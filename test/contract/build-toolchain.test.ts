import t from 'tap';
import {
  BUILD_TOOLS,
  buildUnavailable,
  canBuild,
  replicaBuildState,
} from '../../src/contract/index.js';

/** What a replica needs to build, and the refusal when none can. Pure. */

t.test('only a probe that found every tool can build', async (t) => {
  t.same(BUILD_TOOLS, ['node', 'npm', 'git']);
  t.ok(canBuild({ status: 'probed', missing: [] }));
  t.notOk(canBuild({ status: 'probed', missing: ['git'] }));
  t.notOk(canBuild({ status: 'probe_failed', reason: 'no sandbox' }));
  t.notOk(canBuild(null), 'not reported: cannot build');
  t.notOk(canBuild(undefined));
});

t.test('each replica state says what it lacks and why', async (t) => {
  t.same(replicaBuildState('wb-a', { status: 'probed', missing: ['npm', 'git'] }), {
    nodeId: 'wb-a',
    missing: ['npm', 'git'],
    problem: 'missing_tools',
  });
  t.same(replicaBuildState('wb-b', null), {
    nodeId: 'wb-b',
    missing: ['node', 'npm', 'git'],
    problem: 'not_reported',
  });
  t.same(replicaBuildState(null, { status: 'probe_failed', reason: 'x' }), {
    nodeId: null,
    missing: ['node', 'npm', 'git'],
    problem: 'probe_failed',
  });
});

t.test('build_unavailable names each replica, what it lacks, and what to do', async (t) => {
  const replicas = [
    replicaBuildState('wb-a', { status: 'probed', missing: ['npm'] }),
    replicaBuildState('wb-b', null),
  ];
  const refusal = buildUnavailable(replicas);
  t.equal(refusal.errorCode, 'build_unavailable');
  t.match(refusal.message, /^build_unavailable: no healthy workbench replica can build \(/);
  t.match(refusal.message, 'wb-a lacks npm');
  t.match(refusal.message, 'wb-b has not reported its toolchain');
  t.match(refusal.message, 'workbench-runtime image, which carries node, npm and git');
  t.match(refusal.message, 'MEMQL_RUNNER_IMAGE');
  t.same(refusal.payload, {
    replicas: [
      { nodeId: 'wb-a', missing: ['npm'], problem: 'missing_tools' },
      { nodeId: 'wb-b', missing: ['node', 'npm', 'git'], problem: 'not_reported' },
    ],
  });
  t.same(JSON.parse(JSON.stringify(refusal)), refusal, 'plain JSON, as it crosses the wire');
});
