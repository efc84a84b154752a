/**
 * Case 16: ComputeSDK's time to interactive through the provider. A local node in its
 * own process (`npm start`'s, the bwrap runner); the bench process drives it through
 * `computesdk`'s own client with `memqlWorkbench`: `sandbox.create()` (a run), then
 * `runCommand` of the identity probe sandbox benchmarks run first (`tti-probe.ts`) and of
 * `node -v` (two `exec`s), then `destroy()` (end and delete the run).
 * Timed to the answer of `node -v` (time to interactive), and to the end of the destroy
 * (the whole cycle); one at a time, interleaved with a raw bwrap spawn of `node -v`
 * (the floor of any sandboxed command), and in bursts of sandboxes made at once beside
 * a burst of as many raw spawns. No target yet: the figures are information.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import { compute } from 'computesdk';
import { memqlWorkbench } from '../../../src/client/computesdk/index.js';
import type { BenchContext } from '../context.js';
import { type Row, ratioRow, sampleInterleaved, type Variant } from '../harness.js';
import { startLocalNode } from '../local-node.js';
import { rawBwrap } from '../raw-bwrap.js';
import { median } from '../stats.js';
import { checkProbe, probeCommand } from '../tti-probe.js';

const CASE = '16 computesdk';
const WARMUP = 2;

/** The ms from the start of each call to its end, all started at once. */
async function burst(count: number, one: () => Promise<number>): Promise<number[]> {
  return Promise.all(Array.from({ length: count }, () => one()));
}

export async function computeSdk(ctx: BenchContext): Promise<Row[]> {
  const raw = await rawBwrap(await ctx.dir('computesdk-raw'));
  const node = await startLocalNode(ctx);
  // fallbackOnError: false, so a failed create throws the provider's own error (its code).
  const sdk = compute({
    provider: memqlWorkbench({ baseUrl: node.baseUrl, token: node.token }),
    fallbackOnError: false,
  });
  const samples = ctx.pick(10, 50);
  const atOnce = ctx.pick(20, 100);
  const rounds = ctx.pick(1, 3);

  /** One cycle: create, the probe, `node -v`, destroy; ms to the answer of `node -v` and to the end. */
  async function cycle(): Promise<{ interactive: number; whole: number }> {
    const start = performance.now();
    const sandbox = await sdk.sandbox.create();
    const probe = await sandbox.runCommand(probeCommand(randomBytes(8).toString('hex')));
    checkProbe(probe.exitCode, probe.stdout, probe.stderr);
    const ran = await sandbox.runCommand('node -v');
    const interactive = performance.now() - start;
    if (ran.exitCode !== 0 || !/^v\d+\./.test(ran.stdout)) {
      throw new Error(`node -v in a sandbox exited ${ran.exitCode}: ${ran.stderr.slice(0, 300)}`);
    }
    await sandbox.destroy();
    return { interactive, whole: performance.now() - start };
  }
  const rawNodeV = async () => {
    const start = performance.now();
    await raw.run('node -v');
    return performance.now() - start;
  };

  // One at a time, interleaved with the raw spawn.
  const wholes: number[] = [];
  const subject: Variant = {
    name: 'create + probe + node -v + destroy',
    run: async () => {
      const { interactive, whole } = await cycle();
      wholes.push(whole);
      return interactive;
    },
  };
  const baseline: Variant = { name: 'raw bwrap node -v', run: rawNodeV };
  const [interactive, base] = await sampleInterleaved([subject, baseline], {
    samples,
    warmup: WARMUP,
  });
  const whole = wholes.slice(WARMUP);

  // Bursts: `atOnce` sandboxes at once, then as many raw spawns at once, `rounds` times.
  const burstTti: number[] = [];
  const burstWhole: number[] = [];
  const burstRaw: number[] = [];
  const walls: { subject: number; raw: number }[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    const cycles = await burst(atOnce, async () => {
      const c = await cycle();
      burstWhole.push(c.whole);
      return c.interactive;
    });
    const t1 = performance.now();
    burstTti.push(...cycles);
    burstRaw.push(...(await burst(atOnce, rawNodeV)));
    walls.push({ subject: t1 - t0, raw: performance.now() - t1 });
  }

  const common = { case: CASE, unit: 'ms', target: 'info (no target set)' };
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  return [
    ratioRow(
      {
        ...common,
        subject:
          'ComputeSDK create + runCommand probe + node -v (time to interactive), one at a time',
        baseline: 'raw bwrap spawn of node -v',
        note: `${samples} samples a variant, interleaved, after ${WARMUP} untimed rounds; through computesdk's compute() and memqlWorkbench to a local node over HTTP; each sandbox destroyed after (untimed here)`,
      },
      interactive!,
      base!,
      null,
    ),
    ratioRow(
      {
        ...common,
        subject: 'the whole cycle: create + probe + node -v + destroy (end and delete the run)',
        baseline: 'raw bwrap spawn of node -v',
      },
      whole,
      base!,
      null,
    ),
    ratioRow(
      {
        ...common,
        subject: `${atOnce} at once: create + probe + node -v, each sandbox's time to interactive`,
        baseline: `raw bwrap spawn of node -v, ${atOnce} at once`,
        note: `${rounds} burst(s) of ${atOnce}; burst wall time ${walls.map((w) => ms(w.subject)).join(', ')} (with destroy; whole cycle p50 ${ms(median(burstWhole))}) against ${walls.map((w) => ms(w.raw)).join(', ')} for the raw spawns`,
      },
      burstTti,
      burstRaw,
      null,
    ),
  ];
}
