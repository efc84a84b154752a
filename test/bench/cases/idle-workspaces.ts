/**
 * Case 19: a workbench node holding 10,000 idle workspaces (each a run with a
 * provisioned workspace and three small files, made by `fs_write` through the mesh; no
 * command running) against a fresh node that made no more workspaces than its warm-up's
 * eight but took the same calls (the same number of `fs_write`s, at the same
 * concurrency, at the same time, cycling over its eight runs). Both node processes are
 * on the same database, each behind an agent of its own in the bench process.
 *
 * Two targets. Memory: the difference of the two nodes' resident sizes at the end, per
 * 1,000 idle workspaces, at most 10 MiB. The same calls on both sides mean that what a
 * node keeps of having served calls at all (code, JIT, heap headroom, allocator arenas,
 * uncollected garbage) is on both, and the difference is what holding the workspaces
 * costs. Latency: `exec true` on a run of each node, interleaved, p50 ratio at most 1.1.
 *
 * @module
 */

import { mapLimit } from '../../../src/workbench/sync/index.js';
import { BENCH_AUTHORITY, type BenchContext, envelope, expectOk } from '../context.js';
import { type Row, ratioRow, sampleInterleaved } from '../harness.js';
import { startAgent, startWorkbenchProcess } from '../mesh.js';
import { summarize } from '../stats.js';
import { rssMiB, settledRss } from './memory.js';

/** Files each idle workspace holds. */
const FILES = 3;
/** Calls made at once while the workspaces are made. */
const CONCURRENCY = 8;
/** Target: MiB of RSS per 1,000 idle workspaces. */
const MIB_PER_THOUSAND = 10;

export async function idleWorkspaces(ctx: BenchContext): Promise<Row[]> {
  const { db, url } = await ctx.openDb();
  const count = ctx.pick(1_000, 10_000);
  const idle = await ctx.runs(db, count, 'idle');
  const warm = await ctx.runs(db, CONCURRENCY, 'warm');
  const freshWarm = await ctx.runs(db, CONCURRENCY, 'warm');
  const [loadedRun, freshRun] = await ctx.runs(db, 2, 'exec');
  const loadedNode = await startWorkbenchProcess(ctx, url, [...idle, ...warm, loadedRun!]);
  const freshNode = await startWorkbenchProcess(ctx, url, [...freshWarm, freshRun!]);
  const loaded = await startAgent(ctx, loadedNode);
  const fresh = await startAgent(ctx, freshNode);
  const call = async (
    agent: typeof loaded,
    runId: string,
    action: string,
    args: Record<string, unknown>,
  ) => {
    const out = await agent.dispatch(envelope(runId, action, args), BENCH_AUTHORITY);
    expectOk(out.result, `${action} on ${runId}`);
  };
  const exec = (agent: typeof loaded, runId: string) => () =>
    call(agent, runId, 'exec', { command: 'true' });
  const write = (agent: typeof loaded) => (runId: string) =>
    (async () => {
      for (let i = 0; i < FILES; i++) {
        await call(agent, runId, 'fs_write', { path: `f${i}.txt`, content: `idle ${i}` });
      }
    })();

  // Warm-up, alike on both nodes: the calls that make the workspaces, at the same
  // concurrency, over and over on a few runs; then a few commands.
  for (let round = 0; round < 25; round++) {
    await mapLimit(warm, CONCURRENCY, write(loaded));
    await mapLimit(freshWarm, CONCURRENCY, write(fresh));
  }
  for (let i = 0; i < 10; i++) {
    await exec(loaded, loadedRun!)();
    await exec(fresh, freshRun!)();
  }
  const before = await settledRss(loadedNode.pid);
  const freshBefore = await settledRss(freshNode.pid);

  // The idle workspaces, a thousand at a time, and as many calls on the fresh node's
  // eight runs at the same time; RSS read after each thousand.
  const t0 = performance.now();
  const steps: number[] = [];
  for (let at = 0; at < count; at += 1_000) {
    const batch = idle.slice(at, at + 1_000);
    await Promise.all([
      mapLimit(batch, CONCURRENCY, write(loaded)),
      mapLimit(
        batch.map((_, i) => freshWarm[i % freshWarm.length]!),
        CONCURRENCY,
        write(fresh),
      ),
    ]);
    steps.push(await rssMiB(loadedNode.pid));
  }
  const makeS = (performance.now() - t0) / 1000;
  const [after, freshAfter] = await Promise.all([
    settledRss(loadedNode.pid, 20),
    settledRss(freshNode.pid, 20),
  ]);
  const perThousand = ((after - freshAfter) * 1_000) / count;
  // The loaded node's own growth over the second half: what one more idle workspace
  // costs once the first ones have grown the heap and the arenas.
  const half = Math.floor(steps.length / 2);
  const halfSlope =
    steps.length >= 4 ? ((after - steps[half - 1]!) * 1_000) / (count - half * 1_000) : Number.NaN;

  const [loadedExec, freshExec] = await sampleInterleaved(
    [
      { name: 'loaded', run: exec(loaded, loadedRun!) },
      { name: 'fresh', run: exec(fresh, freshRun!) },
    ],
    { samples: ctx.pick(30, 200), warmup: 5 },
  );

  const one = (x: number) => summarize([x]);
  return [
    {
      case: '19 idle workspaces',
      subject: `RSS per 1,000 idle workspaces (${count} held)`,
      baseline: 'a fresh node, the same calls on 8 runs',
      unit: 'MiB',
      subjectStats: one(perThousand),
      baselineStats: null,
      ratio: null,
      target: `<= ${MIB_PER_THOUSAND} MiB per 1,000`,
      holds: perThousand <= MIB_PER_THOUSAND,
      note: `(loaded - fresh RSS) x 1,000 / ${count}; ${count} workspaces of ${FILES} files made by fs_write through the mesh, ${CONCURRENCY} at once, in ${makeS.toFixed(0)} s; loaded node ${before.toFixed(0)} MiB after the warm-up -> ${after.toFixed(0)} MiB (after each 1,000: ${steps.map((s) => s.toFixed(0)).join(', ')})${Number.isNaN(halfSlope) ? '' : `, ${halfSlope.toFixed(2)} MiB per 1,000 over the second half`}; fresh node ${freshBefore.toFixed(0)} -> ${freshAfter.toFixed(0)} MiB; MEMQL_WARM_MANIFESTS_MAX default (256)`,
    },
    ratioRow(
      {
        case: '19 idle workspaces',
        subject: `exec true on a node holding ${count} idle workspaces`,
        baseline: 'exec true on the fresh node',
        unit: 'ms',
        target: 'p50 ratio <= 1.1',
        note: `both node processes on the same database (${ctx.database.kind}), each behind its own agent in the bench process; interleaved`,
      },
      loadedExec ?? [],
      freshExec ?? [],
      (r) => r <= 1.1,
    ),
  ];
}
