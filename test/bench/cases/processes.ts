/**
 * Case 13: a background process's time to first output. `BwrapRunner.startProcess` of
 * `echo ready; sleep 600` in the run's sandbox for processes, timed from the call to
 * the first output byte, against a raw bwrap spawn of `echo ready` to its exit (the
 * floor of any sandboxed command). Two figures: the first process of a run (its
 * sandbox is made for it) and a later one (the sandbox is there). Each sample's process
 * is killed before the next.
 *
 * @module
 */

import { BwrapRunner } from '../../../src/sandbox/bwrap/index.js';
import type { BenchContext } from '../context.js';
import { type Row, ratioRow, sampleInterleaved, skippedRow, type Variant } from '../harness.js';
import { rawBwrap } from '../raw-bwrap.js';

const CASE = '13 processes';

export async function processes(ctx: BenchContext): Promise<Row[]> {
  const runner = new BwrapRunner({ cpus: null, warmIdleMs: 60_000 });
  ctx.defer(() => runner.close());
  const probe = await runner.probe();
  if (!probe.ok) return [skippedRow(CASE, `bwrap is unusable: ${probe.reason}`)];
  const samples = ctx.pick(5, 30);
  const raw = await rawBwrap(await ctx.dir('processes-raw'));
  let runs = 0;

  /** Starts a process and resolves with the ms to its first output; kills it after. */
  async function firstOutput(workspaceDir: string, reuse: string): Promise<number> {
    const startedAt = performance.now();
    let first!: (ms: number) => void;
    const seen = new Promise<number>((resolve) => {
      first = resolve;
    });
    const handle = await runner.startProcess({
      workspaceDir,
      command: 'echo ready; exec sleep 600',
      reuse,
      onOutput: () => first(performance.now() - startedAt),
    });
    const ms = await seen;
    handle.signal('SIGKILL');
    await handle.ended;
    return ms;
  }

  const fresh: Variant = {
    name: 'first process of a run',
    run: async () => {
      runs += 1;
      const dir = await ctx.dir(`processes-run-${runs}`);
      const ms = await firstOutput(dir, `run-${runs}`);
      await runner.release(dir);
      return ms;
    },
  };
  const warmDir = await ctx.dir('processes-warm');
  await firstOutput(warmDir, 'warm'); // makes the run's sandbox
  const warm: Variant = { name: 'a later process', run: () => firstOutput(warmDir, 'warm') };
  const baseline: Variant = { name: 'raw bwrap echo', run: () => raw.run('echo ready') };
  const [first, later, base] = await sampleInterleaved([fresh, warm, baseline], {
    samples,
    warmup: 2,
  });
  const common = {
    case: CASE,
    baseline: 'raw bwrap spawn of echo, to its exit',
    unit: 'ms',
  };
  return [
    ratioRow(
      {
        ...common,
        subject: 'first output of the first process of a run (its sandbox made)',
        target: 'info',
        note: `${samples} samples a variant, interleaved; each process killed after its first output`,
      },
      first!,
      base!,
      null,
    ),
    ratioRow(
      { ...common, subject: 'first output of a later process (its sandbox there)', target: 'info' },
      later!,
      base!,
      null,
    ),
  ];
}
