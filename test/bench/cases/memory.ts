/**
 * Case 8: memory of a workbench node process (resident size from
 * `/proc/<pid>/status`). Idle RSS against a bare Node process; growth per 1,000 idle
 * workspaces (each made by one `fs_write` through the mesh, then left idle); and the
 * peak above idle while a command floods stdout, against a bare Node process that
 * spawns the same flood and discards it. The output cap
 * (`MEMQL_EXEC_OUTPUT_LIMIT_BYTES`, 1 MiB by default) must keep the node flat.
 *
 * @module
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { mapLimit } from '../../../src/workbench/sync/index.js';
import { BENCH_AUTHORITY, type BenchContext, envelope, expectOk } from '../context.js';
import type { Row } from '../harness.js';
import { startAgent, startWorkbenchProcess } from '../mesh.js';
import { median, summarize } from '../stats.js';

const MiB = 1024 * 1024;
/** "Flat": the peak may exceed idle by at most this much. */
const FLAT_MIB = 50;

/** Resident set size of `pid`, MiB. */
export async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

/** How close `n` readings in a row must be for the resident size to count as level, MiB. */
const LEVEL_MIB = 1;

/** The median of the last `n` readings 100 ms apart, once they level off (a settled figure). */
export async function settledRss(pid: number, n = 10): Promise<number> {
  // Sampled every 100 ms until the last `n` samples lie within LEVEL_MIB of each other
  // (the collector and the allocator have let go of what a burst of calls left), or
  // until 10 * n samples were taken; the median of the last `n`.
  const xs: number[] = [];
  for (let i = 0; i < 10 * n; i++) {
    xs.push(await rssMiB(pid));
    const last = xs.slice(-n);
    if (last.length === n && Math.max(...last) - Math.min(...last) <= LEVEL_MIB) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return median(xs.slice(-n));
}

/** Samples `pid`'s RSS every 5 ms until `work` settles; returns the peak, MiB. */
async function peakDuring(pid: number, work: Promise<unknown>): Promise<number> {
  let peak = 0;
  let done = false;
  const settled = work.finally(() => {
    done = true;
  });
  while (!done) {
    peak = Math.max(peak, await rssMiB(pid).catch(() => 0));
    await new Promise((r) => setTimeout(r, 5));
  }
  await settled;
  return peak;
}

/**
 * A bare Node process: idles; on a line `flood <bytes>` on stdin it spawns
 * `head -c <bytes> /dev/zero`, discards the output and prints `done`.
 */
const BARE_SCRIPT = `
const { spawn } = require('child_process');
require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const bytes = line.split(' ')[1];
  const c = spawn('head', ['-c', bytes, '/dev/zero'], { stdio: ['ignore', 'pipe', 'ignore'] });
  c.stdout.on('data', () => {});
  c.on('close', () => process.stdout.write('done\\n'));
});
`;

async function startBare(
  ctx: BenchContext,
): Promise<{ child: ChildProcess; flood(bytes: number): Promise<void> }> {
  const child = spawn(process.execPath, ['-e', BARE_SCRIPT], { stdio: ['pipe', 'pipe', 'ignore'] });
  const exited = once(child, 'exit');
  ctx.defer(async () => {
    child.kill('SIGKILL');
    await exited;
  });
  const lines = createInterface({ input: child.stdout! });
  return {
    child,
    flood: (bytes) =>
      new Promise((done) => {
        lines.once('line', () => done());
        child.stdin?.write(`flood ${bytes}\n`);
      }),
  };
}

export async function memory(ctx: BenchContext): Promise<Row[]> {
  const { db, url } = await ctx.openDb();
  const idleCount = ctx.pick(200, 1000);
  const floodBytes = ctx.pick(64, 1024) * MiB;
  const runIds = await ctx.runs(db, idleCount + 1);
  const floodRun = runIds[idleCount]!;
  const wb = await startWorkbenchProcess(ctx, url, runIds);
  const agent = await startAgent(ctx, wb);
  const bare = await startBare(ctx);
  await new Promise((r) => setTimeout(r, 1_000));

  // Idle: interleaved readings of both processes.
  const wbIdle: number[] = [];
  const bareIdle: number[] = [];
  for (let i = 0; i < 10; i++) {
    wbIdle.push(await rssMiB(wb.pid));
    bareIdle.push(await rssMiB(bare.child.pid!));
    await new Promise((r) => setTimeout(r, 100));
  }

  // Growth: one fs_write per run makes a workspace (row, directory, warm-cache entry).
  const before = await settledRss(wb.pid);
  const t0 = performance.now();
  await mapLimit(runIds.slice(0, idleCount), 8, async (runId) => {
    const o = await agent.dispatch(
      envelope(runId, 'fs_write', { path: 'a.txt', content: 'idle' }),
      BENCH_AUTHORITY,
    );
    expectOk(o.result, 'fs_write');
  });
  const makeS = (performance.now() - t0) / 1000;
  const after = await settledRss(wb.pid, 20);
  const perThousand = ((after - before) * 1000) / idleCount;

  // Flood: peak above idle, the node against the bare process. A small flood first
  // (past the cap, so the truncating path and a capped result row are warm), so the
  // figure is the flood's, not the first exec's one-time loading.
  const floodCmd = `head -c ${floodBytes} /dev/zero`;
  for (let i = 0; i < 3; i++) {
    expectOk(
      (
        await agent.dispatch(
          envelope(floodRun, 'exec', { command: `head -c ${4 * MiB} /dev/zero` }),
          BENCH_AUTHORITY,
        )
      ).result,
      'warm-up flood',
    );
  }
  await bare.flood(4 * MiB);
  const wbBefore = await settledRss(wb.pid);
  const wbPeak = await peakDuring(
    wb.pid,
    agent
      .dispatch(
        envelope(floodRun, 'exec', { command: floodCmd, timeoutMs: 120_000 }),
        BENCH_AUTHORITY,
      )
      .then((o) => expectOk(o.result, 'flood')),
  );
  const bareBefore = await settledRss(bare.child.pid!);
  const barePeak = await peakDuring(bare.child.pid!, bare.flood(floodBytes));

  const one = (x: number) => summarize([x]);
  return [
    {
      case: '8 memory',
      subject: 'workbench node idle RSS',
      baseline: 'bare node process idle RSS',
      unit: 'MiB',
      subjectStats: summarize(wbIdle),
      baselineStats: summarize(bareIdle),
      ratio: median(wbIdle) / median(bareIdle),
      target: 'info (no target set)',
      holds: null,
    },
    {
      case: '8 memory',
      subject: `growth per 1,000 idle workspaces`,
      baseline: '-',
      unit: 'MiB',
      subjectStats: one(perThousand),
      baselineStats: null,
      ratio: null,
      target: 'info (no target set)',
      holds: null,
      note: `${idleCount} workspaces made by fs_write through the mesh in ${makeS.toFixed(1)} s; RSS ${before.toFixed(0)} -> ${after.toFixed(0)} MiB`,
    },
    {
      case: '8 memory',
      subject: `peak - idle during ${floodBytes / MiB} MiB stdout flood`,
      baseline: 'bare node spawning the same flood',
      unit: 'MiB',
      subjectStats: one(wbPeak - wbBefore),
      baselineStats: one(barePeak - bareBefore),
      ratio: (wbPeak - wbBefore) / Math.max(barePeak - bareBefore, 0.1),
      target: `flat: peak - idle <= ${FLAT_MIB} MiB`,
      holds: wbPeak - wbBefore <= FLAT_MIB,
      note: `node ${wbBefore.toFixed(0)} -> peak ${wbPeak.toFixed(0)} MiB; bare ${bareBefore.toFixed(0)} -> peak ${barePeak.toFixed(0)} MiB; output cap MEMQL_EXEC_OUTPUT_LIMIT_BYTES default (1 MiB)`,
    },
  ];
}
