import t from 'tap';
import {
  commandGroupName,
  groupCreator,
  processExists,
  sweepCandidates,
} from '../../src/sandbox/cgroups/index.js';

t.test('group names carry the creating pid', async (t) => {
  t.equal(commandGroupName(4242, '0a1b'), '4242-0a1b');
  t.equal(groupCreator('4242-0a1b'), 4242);
  for (const foreign of [
    '0a1b2c3d4e5f6a7b',
    'memql',
    '-12-ab',
    '0-ab',
    '12-',
    '12-AB',
    'x-12-ab',
  ]) {
    t.equal(groupCreator(foreign), null, `${JSON.stringify(foreign)} is not a command group name`);
  }
});

t.test('sweepCandidates: which leftover groups a sweep may try to remove', async (t) => {
  const alive = new Set([100, 200]);
  const view = {
    ownPid: 100,
    active: new Set(['100-run']),
    alive: (pid: number) => alive.has(pid),
  };
  const cases: [string, boolean, string][] = [
    ['100-run', false, 'a command of this process running now'],
    ['100-done', true, 'this process, no command holds it (its removal failed)'],
    ['200-other', false, 'another live process: it may be about to use it'],
    ['300-dead', true, 'its creator is gone'],
    ['0a1b2c3d4e5f6a7b', false, 'a name not of this form is not ours to judge'],
  ];
  t.same(
    sweepCandidates(
      cases.map(([name]) => name),
      view,
    ),
    cases.filter(([, take]) => take).map(([name]) => name),
  );
  for (const [name, take, why] of cases) {
    t.equal(sweepCandidates([name], view).length === 1, take, why);
  }
});

t.test('processExists', async (t) => {
  t.equal(processExists(process.pid), true);
  t.equal(processExists(1), true, 'init exists (EPERM would count as existing too)');
  t.equal(processExists(2 ** 22 + 1), false, 'beyond the largest pid');
});
