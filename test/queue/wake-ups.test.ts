import t from 'tap';
import { noticeWakes, WakeUps } from '../../src/queue/wake-ups.js';

t.test('which notices of a queued command wake a worker', async (t) => {
  const self = { leaseOwner: 'node-a/1', nodeId: 'node-a' };
  const cases: [string, { sender: string; holder: string | null }, boolean][] = [
    ['its own enqueue (it woke itself)', { sender: 'node-a/1', holder: 'node-a' }, false],
    ['a run no node holds', { sender: 'node-b/1', holder: null }, true],
    [
      'a run its node holds, queued on another node',
      { sender: 'node-c/1', holder: 'node-a' },
      true,
    ],
    ["a run another node holds (that node's)", { sender: 'node-b/1', holder: 'node-b' }, false],
  ];
  for (const [what, notice, wakes] of cases) t.equal(noticeWakes(notice, self), wakes, what);
});

t.test('a wake-up ends an idle, and one that came while busy ends the next at once', async (t) => {
  const w = new WakeUps();
  const idle = w.idle(2_000_000_000);
  w.wake();
  await idle;
  // Still woken: the worker has not looked for work since.
  await w.idle(2_000_000_000);
  w.clear();
  const next = w.idle(2_000_000_000);
  w.wake();
  await next;
  t.pass('every idle ended by a wake-up');
});
