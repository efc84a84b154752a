import t from 'tap';
import { interleavedOrder, median, quantile, ratio, summarize } from './stats.js';

t.test('median of odd, even, unsorted and one-element series', async (t) => {
  t.equal(median([3, 1, 2]), 2);
  t.equal(median([4, 1, 3, 2]), 2.5);
  t.equal(median([7]), 7);
  t.ok(Number.isNaN(median([])));
});

t.test('quantiles interpolate between closest ranks', async (t) => {
  const xs = Array.from({ length: 101 }, (_, i) => i); // 0..100
  t.equal(quantile(xs, 0.95), 95);
  t.equal(quantile(xs, 0.99), 99);
  t.equal(quantile([10, 20], 0.95), 19.5);
  t.equal(quantile([5, 1], 0), 1);
  t.equal(quantile([5, 1], 1), 5);
  t.throws(() => quantile([1], 1.5), RangeError);
});

t.test('summarize reports n, median, p95, p99, mean, min, max', async (t) => {
  const s = summarize([1, 2, 3, 4, 100]);
  t.equal(s.n, 5);
  t.equal(s.median, 3);
  t.equal(s.mean, 22);
  t.equal(s.min, 1);
  t.equal(s.max, 100);
  t.ok(s.p95 > 4 && s.p95 < 100);
  t.ok(s.p99 > s.p95 && s.p99 <= 100);
});

t.test('the input is not reordered', async (t) => {
  const xs = [3, 1, 2];
  median(xs);
  t.same(xs, [3, 1, 2]);
});

t.test('ratio is subject over baseline, NaN when undefined', async (t) => {
  t.equal(ratio(3, 2), 1.5);
  t.ok(Number.isNaN(ratio(1, 0)));
  t.ok(Number.isNaN(ratio(Number.NaN, 1)));
});

t.test('interleaving alternates which variant goes first', async (t) => {
  t.same(interleavedOrder(2, 3), [0, 1, 1, 0, 0, 1]);
  t.same(interleavedOrder(3, 2), [0, 1, 2, 1, 2, 0]);
  t.same(interleavedOrder(2, 0), []);
  const counts = [0, 0, 0];
  for (const i of interleavedOrder(3, 7)) counts[i] = (counts[i] ?? 0) + 1;
  t.same(counts, [7, 7, 7], 'every variant sampled once per round');
});
