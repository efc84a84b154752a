/**
 * Case 4: throughput. `runs` concurrent runs each issue `perRun` sequential `exec true`
 * through the in-process host (worker concurrency set to `runs`, so the queue is not
 * the limit), against raw bwrap spawns at the same concurrency. One sample is one
 * whole batch; the figure is commands per second.
 *
 * @module
 */

import { BwrapRunner } from '../../../src/sandbox/bwrap/index.js';
import { BENCH_AUTHORITY, type BenchContext, envelope, expectOk } from '../context.js';
import { type Row, ratioRow, sampleInterleaved } from '../harness.js';
import { type RawBwrap, rawBwrap } from '../raw-bwrap.js';

export async function throughput(ctx: BenchContext): Promise<Row[]> {
  const runs = ctx.pick(8, 32);
  const perRun = ctx.pick(5, 20);
  const { db } = await ctx.openDb();
  const { host } = await ctx.host(db, { MEMQL_COMMAND_CONCURRENCY: String(runs) });
  const runIds = await ctx.runs(db, runs);
  const raws: RawBwrap[] = [];
  for (let i = 0; i < runs; i++) raws.push(await rawBwrap(await ctx.dir('raw-tp')));
  const runner = new BwrapRunner({ logger: ctx.log });
  const runnerDirs: string[] = [];
  for (let i = 0; i < runs; i++) runnerDirs.push(await ctx.dir('runner-tp'));
  const total = runs * perRun;
  const [hostMs, rawMs, runnerMs] = await sampleInterleaved(
    [
      {
        name: 'host',
        run: async () => {
          await Promise.all(
            runIds.map(async (runId) => {
              for (let i = 0; i < perRun; i++) {
                expectOk(
                  await host.handleDispatch(
                    envelope(runId, 'exec', { command: 'true' }),
                    BENCH_AUTHORITY,
                  ),
                  'exec true',
                );
              }
            }),
          );
        },
      },
      {
        name: 'raw',
        run: async () => {
          await Promise.all(
            raws.map(async (raw) => {
              for (let i = 0; i < perRun; i++) await raw.run('true');
            }),
          );
        },
      },
      {
        name: 'runner',
        run: async () => {
          await Promise.all(
            runnerDirs.map(async (dir) => {
              for (let i = 0; i < perRun; i++) {
                const r = await runner.run({
                  workspaceDir: dir,
                  command: 'true',
                  timeoutMs: 60_000,
                  outputLimitBytes: 1 << 20,
                });
                if (r.exitCode !== 0) throw new Error(`runner: exit ${r.exitCode}`);
              }
            }),
          );
        },
      },
    ],
    { samples: ctx.pick(2, 3), warmup: 0 },
  );
  const phases = await db.query<{ wait: number; exec: number; dur: number }>(
    `select percentile_cont(0.5) within group (order by extract(epoch from (started_at - queued_at)) * 1000) as wait,
            percentile_cont(0.5) within group (order by extract(epoch from (finished_at - started_at)) * 1000) as exec,
            percentile_cont(0.5) within group (order by exec_duration_ms) as dur
       from workspace_command where status = 'completed'`,
  );
  const ph = phases[0];
  const phaseNote = ph
    ? `p50 per command inside the host (command rows): queue wait ${Number(ph.wait).toFixed(1)} ms, claimed-to-finished ${Number(ph.exec).toFixed(1)} ms of which runner ${Number(ph.dur).toFixed(1)} ms`
    : '';
  const rate = (ms: number[] | undefined) => (ms ?? []).map((m) => total / (m / 1000));
  return [
    ratioRow(
      {
        case: '4 throughput',
        subject: `${runs} runs x ${perRun} exec true (host)`,
        baseline: `raw bwrap, ${runs} concurrent`,
        unit: 'cmd/s',
        target: 'ratio >= 0.8',
        note: `one sample = one batch of ${total} commands; worker concurrency ${runs}; p95/p99 of a handful of batches are near the max. ${phaseNote}`,
      },
      rate(hostMs),
      rate(rawMs),
      (r) => r >= 0.8,
    ),
    ratioRow(
      {
        case: '4 throughput',
        subject: `${runs} x ${perRun} BwrapRunner.run true`,
        baseline: `raw bwrap, ${runs} concurrent`,
        unit: 'cmd/s',
        target: 'info (runner share of the gap)',
      },
      rate(runnerMs),
      rate(rawMs),
      null,
    ),
  ];
}
