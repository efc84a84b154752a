import t from 'tap';
import { WorkerCalls } from '../../src/agent/worker-calls.js';

/**
 * The kill switch's view of the calls in flight: which tickets a switch stops, and
 * when. Pure: no I/O.
 */

t.test('a switch stops the running calls it covers, and only those', async (t) => {
  const calls = new WorkerCalls();
  const desk = calls.begin('alice');
  desk.assign('desk');
  const laptop = calls.begin('alice');
  laptop.assign('laptop');
  const bobs = calls.begin('bob');
  bobs.assign('desk');
  t.equal(calls.stopForKillSwitch('alice', 'desk'), 1, 'one worker');
  t.equal(desk.stopped, true);
  t.equal(desk.signal.aborted, true, 'its signal aborts, which cancels the call');
  t.equal(laptop.stopped, false, "another worker's call runs on");
  t.equal(bobs.stopped, false, "another user's call runs on");
  t.equal(calls.stopForKillSwitch('alice', null), 1, 'every worker: the rest of alice’s');
  t.equal(laptop.stopped, true);
  t.equal(calls.stopForKillSwitch('alice', null), 0, 'idempotent');
  t.equal(bobs.stopped, false);
});

t.test('a call still deciding is stopped when its worker is chosen', async (t) => {
  const calls = new WorkerCalls();
  const deciding = calls.begin('alice');
  t.equal(calls.stopForKillSwitch('alice', 'desk'), 0, 'nothing running yet');
  t.equal(deciding.stopped, false);
  deciding.assign('laptop');
  t.equal(deciding.stopped, false, 'the switch was for another worker');

  const other = calls.begin('alice');
  calls.stopForKillSwitch('alice', 'desk');
  other.assign('desk');
  t.equal(other.stopped, true, 'stopped before anything is sent');

  const any = calls.begin('alice');
  calls.stopForKillSwitch('alice', null);
  any.assign('whichever');
  t.equal(any.stopped, true);
});

t.test('a call that has its answer is forgotten', async (t) => {
  const calls = new WorkerCalls();
  const done = calls.begin('alice');
  done.assign('desk');
  t.same(calls.users(), ['alice']);
  done.end();
  t.same(calls.users(), []);
  t.equal(calls.stopForKillSwitch('alice', null), 0);
  t.equal(done.stopped, false);
});
