import t from 'tap';
import { eitherSignal, WorkerCalls } from '../../src/agent/worker-calls.js';
import { abortDetaches, CallerGoneError } from '../../src/contract/index.js';

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

t.test('the combined signal keeps the reason of the one that aborted', async (t) => {
  const caller = new AbortController();
  const ticket = new WorkerCalls().begin('alice');
  const both = eitherSignal(caller.signal, ticket.signal);
  caller.abort(new CallerGoneError('the HTTP connection closed'));
  t.equal(both.aborted, true);
  t.equal(abortDetaches(both.reason), true, 'a caller that only left: the call goes on');

  const cancelling = new AbortController();
  const switched = new WorkerCalls();
  const stopped = switched.begin('alice');
  stopped.assign('desk');
  const either = eitherSignal(cancelling.signal, stopped.signal);
  switched.stopForKillSwitch('alice', null);
  t.equal(either.aborted, true);
  t.equal(abortDetaches(either.reason), false, 'the kill switch cancels the call');
  const cancelled = new AbortController();
  const plain = eitherSignal(cancelled.signal, new WorkerCalls().begin('bob').signal);
  cancelled.abort();
  t.equal(abortDetaches(plain.reason), false, 'a cancel cancels it');
});
