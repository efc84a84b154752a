/**
 * Case 1: `exec true` through in-process dispatch on the bwrap runner against a raw
 * bwrap spawn with the same flags. Also: the runner alone against the same baseline,
 * the command row's phase timestamps, and the host's statements per call, to say where
 * a gap comes from.
 *
 * @module
 */

import { BwrapRunner } from '../../../src/sandbox/bwrap/index.js';
import { benchCgroups } from '../bench-cgroups.js';
import { BENCH_AUTHORITY, type BenchContext, envelope, expectOk } from '../context.js';
import { countingDb, describeTallies } from '../counting-db.js';
import { type Row, ratioRow, sampleInterleaved, skippedRow } from '../harness.js';
import { describePhases, PhaseLog } from '../phases.js';
import { rawBwrap } from '../raw-bwrap.js';

export async function execInProcess(ctx: BenchContext): Promise<Row[]> {
  const { db } = await ctx.openDb();
  // The host's statements are counted (the phase reads below use `db` directly).
  const counted = countingDb(db);
  const { host } = await ctx.host(counted.db);
  let calls = 0;
  const [runId] = await ctx.runs(db, 1);
  const raw = await rawBwrap(await ctx.dir('raw-ws'));
  const procs = await benchCgroups(ctx);
  const launched = await rawBwrap(await ctx.dir('raw-ws'), { launcher: { cgroupProcsFiles: [] } });
  const inCgroup = procs
    ? await rawBwrap(await ctx.dir('raw-ws'), { launcher: { cgroupProcsFiles: procs } })
    : null;
  const runner = new BwrapRunner({ logger: ctx.log });
  const bare = new BwrapRunner({ logger: ctx.log, cgroups: false });
  const runnerDir = await ctx.dir('runner-ws');
  const warmDir = await ctx.dir('runner-warm-ws');
  ctx.defer(() => runner.close());
  const runOnce = async (r: BwrapRunner, reuse?: string) => {
    const res = await r.run({
      workspaceDir: reuse === undefined ? runnerDir : warmDir,
      command: 'true',
      timeoutMs: 30_000,
      outputLimitBytes: 1 << 20,
      ...(reuse === undefined ? {} : { reuse }),
    });
    if (res.exitCode !== 0) throw new Error(`runner: exit ${res.exitCode}`);
  };
  const phases = new PhaseLog();
  const samples = ctx.pick(15, 60);
  const [hostMs, runnerMs, warmMs, bareMs, rawMs, launchedMs, inCgroupMs] = await sampleInterleaved(
    [
      {
        name: 'host',
        run: async () => {
          calls += 1;
          const start = performance.now();
          const r = await host.handleDispatch(
            envelope(runId!, 'exec', { command: 'true' }),
            BENCH_AUTHORITY,
          );
          const total = performance.now() - start;
          expectOk(r, 'exec true');
          phases.note(r, total);
          return total;
        },
      },
      { name: 'runner', run: () => runOnce(runner) },
      { name: 'runner, warm sandbox', run: () => runOnce(runner, 'bench') },
      { name: 'runner without cgroups', run: () => runOnce(bare) },
      { name: 'raw', run: () => raw.run('true') },
      { name: 'raw via sh launcher', run: () => launched.run('true') },
      ...(inCgroup
        ? [{ name: 'raw via sh launcher in cgroups', run: () => inCgroup.run('true') }]
        : []),
    ],
    { samples, warmup: 3 },
  );
  const warm = await phases.read(db, samples);
  return [
    ratioRow(
      {
        case: '1 exec in-process',
        subject: 'handleDispatch exec true (bwrap)',
        baseline: 'raw bwrap spawn, same argv',
        unit: 'ms',
        target: 'p50 ratio <= 1.25',
        note: `${describePhases(warm)}. Statements per call through the host (measured, its background loops included): ${describeTallies(counted.tallies, calls)}`,
      },
      hostMs ?? [],
      rawMs ?? [],
      (r) => r <= 1.25,
    ),
    ratioRow(
      {
        case: '1 exec in-process',
        subject: 'BwrapRunner.run true (no dispatch)',
        baseline: 'raw bwrap spawn, same argv',
        unit: 'ms',
        target: 'info (runner share of the gap)',
      },
      runnerMs ?? [],
      rawMs ?? [],
      null,
    ),
    ratioRow(
      {
        case: '1 exec in-process',
        subject: 'BwrapRunner.run true, warm sandbox (same reuse key)',
        baseline: 'raw bwrap spawn, same argv',
        unit: 'ms',
        target: 'info (what a command costs in a warm sandbox)',
      },
      warmMs ?? [],
      rawMs ?? [],
      null,
    ),
    ratioRow(
      {
        case: '1 exec in-process',
        subject: 'BwrapRunner.run true, cgroups off',
        baseline: 'raw bwrap spawn, same argv',
        unit: 'ms',
        target: 'info (cgroup share of the gap)',
      },
      bareMs ?? [],
      rawMs ?? [],
      null,
    ),
    ratioRow(
      {
        case: '1 exec in-process',
        subject: 'raw bwrap via the sh launcher',
        baseline: 'raw bwrap spawn, same argv',
        unit: 'ms',
        target: 'info (launcher share)',
      },
      launchedMs ?? [],
      rawMs ?? [],
      null,
    ),
    inCgroupMs
      ? ratioRow(
          {
            case: '1 exec in-process',
            subject: 'raw bwrap via sh, joining 2 existing cgroups',
            baseline: 'raw bwrap spawn, same argv',
            unit: 'ms',
            target: 'info (cost of running inside a cgroup, no create/remove)',
          },
          inCgroupMs,
          rawMs ?? [],
          null,
        )
      : skippedRow('1 exec in-process', 'cgroup variant needs root and cgroup v1'),
  ];
}
