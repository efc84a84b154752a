import t from 'tap';
import { DEFAULT_BACKOFF, nextBackoff } from '../../src/mesh/backoff.js';

t.test('the ceiling doubles from 250 ms and stops at 5 s', async (t) => {
  const table: [number, number][] = [
    [0, 250],
    [1, 500],
    [2, 1_000],
    [3, 2_000],
    [4, 4_000],
    [5, 5_000],
    [50, 5_000],
  ];
  for (const [attempt, ceiling] of table) {
    t.equal(nextBackoff(attempt, 0.999999), ceiling, `attempt ${attempt}: top of the range`);
    t.equal(nextBackoff(attempt, 0), ceiling / 2, `attempt ${attempt}: bottom of the range`);
  }
});

t.test('jitter spreads within [ceiling/2, ceiling]', async (t) => {
  t.equal(nextBackoff(2, 0.5), 750);
  const seen = new Set<number>();
  for (let i = 0; i < 100; i++) {
    const d = nextBackoff(3, i / 100);
    t.ok(d >= 1_000 && d <= 2_000);
    seen.add(d);
  }
  t.ok(seen.size > 50, 'different draws give different delays');
});

t.test('odd inputs are clamped, never negative, zero or NaN', async (t) => {
  t.equal(nextBackoff(-3, 0.5), nextBackoff(0, 0.5));
  t.equal(nextBackoff(Number.NaN, 0.5), nextBackoff(0, 0.5));
  t.equal(nextBackoff(1, -1), 250);
  t.equal(nextBackoff(1, 7), 500);
  t.equal(nextBackoff(1, Number.NaN), 250);
  t.equal(nextBackoff(Number.POSITIVE_INFINITY, 1), nextBackoff(0, 1));
});

t.test('the curve is a parameter', async (t) => {
  t.equal(nextBackoff(3, 1, { initialMs: 10, maxMs: 1_000, multiplier: 3 }), 270);
  t.equal(DEFAULT_BACKOFF.maxMs, 5_000);
});
