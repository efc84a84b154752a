/**
 * Case 17: time to interactive through the HTTP API, as sandbox benchmarks measure it:
 * create a run, run an identity probe (`tti-probe.ts`: it fails on a marker an earlier
 * sandbox left) and `node -v`, stop the clock; end and delete the run after, untimed.
 * Against a local node in its own process (`npm start`'s, the bwrap runner, its warm
 * pool as `MEMQL_SANDBOX_WARM_POOL` in the bench's environment sets it, else the
 * default); one at a time, interleaved with a raw bwrap spawn of `node -v`, and 100
 * runs at once beside 100 raw spawns at once. The floor rows run the same work with
 * nothing of ours (one raw spawn: the probe, then `node -v`): where process creation is
 * slow, the probe's dozen processes alone put the floor at the targets' ratios. With a
 * Postgres server, the node's command rows say where the time went (queue wait,
 * claimed to finished, the runner).
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import { type DispatchResult, WorkbenchClient } from '../../../src/client/index.js';
import type { BenchContext } from '../context.js';
import { type Row, ratioRow, sampleInterleaved, type Variant } from '../harness.js';
import { startLocalNode } from '../local-node.js';
import { type ExecPhases, PhaseLog } from '../phases.js';
import { rawBwrap } from '../raw-bwrap.js';
import { median } from '../stats.js';
import { checkProbe, probeCommand } from '../tti-probe.js';

const CASE = '17 tti';
const WARMUP = 2;

interface Cycle {
  /** Create, probe and `node -v`: the time to interactive. */
  tti: number;
  create: number;
  probe: number;
  nodeV: number;
}

/** The ms of each call, all started at once. */
function atOnce<T>(count: number, one: () => Promise<T>): Promise<T[]> {
  return Promise.all(Array.from({ length: count }, () => one()));
}

export async function tti(ctx: BenchContext): Promise<Row[]> {
  const raw = await rawBwrap(await ctx.dir('tti-raw'));
  const pool = process.env.MEMQL_SANDBOX_WARM_POOL;
  const node = await startLocalNode(
    ctx,
    pool === undefined ? {} : { MEMQL_SANDBOX_WARM_POOL: pool },
  );
  const client = new WorkbenchClient({ baseUrl: node.baseUrl, token: node.token });
  const samples = ctx.pick(30, 200);
  const burst = ctx.pick(20, 100);
  const rounds = ctx.pick(1, 3);
  const probes = new PhaseLog();
  const nodeVs = new PhaseLog();

  async function exec(runId: string, command: string, log: PhaseLog): Promise<DispatchResult> {
    const start = performance.now();
    const r = await client.dispatch({
      action: 'exec',
      args: { command },
      runId,
      agentId: 'bench',
      taskId: 'tti',
    });
    log.note(r, performance.now() - start);
    if (!r.ok) throw new Error(`exec: ${r.errorCode}: ${r.message}`);
    return r;
  }

  const ended: string[] = [];
  /**
   * One run: create, the probe, `node -v` (timed); end (untimed). Deleting a run
   * deletes its command rows: runs are deleted once the rows have been read.
   */
  async function cycle(): Promise<Cycle> {
    const t0 = performance.now();
    const run = await client.createRun();
    const t1 = performance.now();
    const probe = await exec(run.id, probeCommand(randomBytes(8).toString('hex')), probes);
    const t2 = performance.now();
    const nodeV = await exec(run.id, 'node -v', nodeVs);
    const t3 = performance.now();
    const p = probe.payload as { exitCode: number | null; stdout: string; stderr: string };
    checkProbe(p.exitCode, p.stdout, p.stderr);
    const v = nodeV.payload as { exitCode: number | null; stdout: string };
    if (v.exitCode !== 0 || !/^v\d+\./.test(v.stdout)) throw new Error(`node -v: ${v.stdout}`);
    await client.endRun(run.id, 'succeeded');
    ended.push(run.id);
    return { tti: t3 - t0, create: t1 - t0, probe: t2 - t1, nodeV: t3 - t2 };
  }
  const rawNodeV = async () => {
    const start = performance.now();
    await raw.run('node -v');
    return performance.now() - start;
  };
  // The same work with none of ours: one raw spawn runs the probe, then `node -v`.
  const rawFloor = async () => {
    const start = performance.now();
    await raw.run(`${probeCommand(randomBytes(8).toString('hex'))}; node -v`);
    return performance.now() - start;
  };

  const seq: Cycle[] = [];
  const subject: Variant = {
    name: 'create + probe + node -v',
    run: async () => {
      const c = await cycle();
      seq.push(c);
      return c.tti;
    },
  };
  const [one, base, floor] = await sampleInterleaved(
    [subject, { name: 'raw', run: rawNodeV }, { name: 'floor', run: rawFloor }],
    { samples, warmup: WARMUP },
  );
  const seqTimed = seq.slice(WARMUP);
  const seqCalls = samples + WARMUP;

  const many: Cycle[] = [];
  const manyRaw: number[] = [];
  const manyFloor: number[] = [];
  const walls: string[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    many.push(...(await atOnce(burst, cycle)));
    const t1 = performance.now();
    manyRaw.push(...(await atOnce(burst, rawNodeV)));
    const t2 = performance.now();
    manyFloor.push(...(await atOnce(burst, rawFloor)));
    walls.push(
      `${(t1 - t0).toFixed(0)} ms against ${(t2 - t1).toFixed(0)} ms for the raw spawns and ${(performance.now() - t2).toFixed(0)} ms for the floor's`,
    );
  }
  const against = (xs: readonly number[], ys: readonly number[]) =>
    (median(xs) / median(ys)).toFixed(2);

  const split = (cs: readonly Cycle[]) =>
    `create ${ms(cs.map((c) => c.create))}, probe ${ms(cs.map((c) => c.probe))}, node -v ${ms(cs.map((c) => c.nodeV))}`;
  const rows = async (log: PhaseLog, from: number, count: number) =>
    node.db ? (await log.read(node.db)).slice(from, from + count) : [];
  const phases = async (from: number, count: number) => {
    if (node.db === null) return 'no command rows (PGlite: the node holds its database)';
    return `probe ${describe(await rows(probes, from, count))}; node -v ${describe(await rows(nodeVs, from, count))}`;
  };
  const seqPhases = await phases(WARMUP, samples);
  const manyPhases = await phases(seqCalls, burst * rounds);
  for (let i = 0; i < ended.length; i += 8) {
    await Promise.all(ended.slice(i, i + 8).map((id) => client.deleteRun(id)));
  }
  const poolSetting = `MEMQL_SANDBOX_WARM_POOL=${pool ?? 'default (4)'}`;
  return [
    ratioRow(
      {
        case: CASE,
        subject: 'create run + probe + node -v (time to interactive), one at a time',
        baseline: 'raw bwrap spawn of node -v',
        unit: 'ms',
        target: 'p50 ratio <= 2',
        note: `${samples} samples a variant, interleaved, after ${WARMUP} untimed; ${poolSetting}; p50 ${split(seqTimed)}; p50 from the rows (ms): ${seqPhases}; each run ended after, and deleted at the end of the case`,
      },
      one!,
      base!,
      (r) => r <= 2,
    ),
    ratioRow(
      {
        case: CASE,
        subject: `${burst} runs at once: create + probe + node -v, each run's time to interactive`,
        baseline: `raw bwrap spawn of node -v, ${burst} at once`,
        unit: 'ms',
        target: 'p50 ratio <= 3',
        note: `${rounds} round(s) of ${burst}; wall ${walls.join(', ')}; ${poolSetting}; p50 ${split(many)}; p50 from the rows (ms): ${manyPhases}`,
      },
      many.map((c) => c.tti),
      manyRaw,
      (r) => r <= 3,
    ),
    ratioRow(
      {
        case: CASE,
        subject: 'floor: the probe, then node -v, in one raw bwrap spawn, one at a time',
        baseline: 'raw bwrap spawn of node -v',
        unit: 'ms',
        target: 'none: the least the first row can be here',
        note: `sampled with the first row, interleaved; the first row against this floor: ${against(one!, floor!)}`,
      },
      floor!,
      base!,
      null,
    ),
    ratioRow(
      {
        case: CASE,
        subject: `floor: the probe, then node -v, in one raw bwrap spawn, ${burst} at once`,
        baseline: `raw bwrap spawn of node -v, ${burst} at once`,
        unit: 'ms',
        target: 'none: the least the second row can be here',
        note: `after the second row's spawns, each round; the second row against this floor: ${against(
          many.map((c) => c.tti),
          manyFloor,
        )}`,
      },
      manyFloor,
      manyRaw,
      null,
    ),
  ];
}

function ms(xs: readonly number[]): string {
  return median(xs).toFixed(1);
}

function describe(all: readonly ExecPhases[]): string {
  if (all.length === 0) return '-';
  const m = (k: keyof ExecPhases) => median(all.map((p) => p[k])).toFixed(1);
  return `total ${m('total')} = queue wait ${m('queueWait')} + runner ${m('runner')} + executor ${m('executorOverhead')} + outside the row ${m('outside')}`;
}
