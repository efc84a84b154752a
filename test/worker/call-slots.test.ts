import t from 'tap';
import { CallSlots, SlotWaitAborted } from '../../src/worker/index.js';

/** A worker's capacity: at most `capacity` calls at once, the rest wait in order. */

t.test('calls beyond the capacity wait, in order, and run as slots free', async (t) => {
  const slots = new CallSlots(2);
  const a = await slots.acquire();
  const b = await slots.acquire();
  t.same([slots.running, slots.queued], [2, 0]);
  const order: string[] = [];
  const c = slots.acquire().then((release) => {
    order.push('c');
    return release;
  });
  const d = slots.acquire().then((release) => {
    order.push('d');
    return release;
  });
  t.same([slots.running, slots.queued], [2, 2]);
  a();
  a(); // a release is idempotent
  const releaseC = await c;
  t.same([slots.running, slots.queued], [2, 1]);
  b();
  const releaseD = await d;
  t.same(order, ['c', 'd']);
  releaseC();
  releaseD();
  t.same([slots.running, slots.queued], [0, 0]);
});

t.test('a call cancelled while it waits leaves the line without a slot', async (t) => {
  const slots = new CallSlots(1);
  const held = await slots.acquire();
  const controller = new AbortController();
  const waiting = slots.acquire(controller.signal);
  t.equal(slots.queued, 1);
  controller.abort();
  await t.rejects(waiting, SlotWaitAborted);
  t.same([slots.running, slots.queued], [1, 0]);
  held();
  t.equal(slots.running, 0);
  await t.rejects(slots.acquire(controller.signal), SlotWaitAborted, 'already aborted');
  t.throws(() => new CallSlots(0), RangeError);
});
