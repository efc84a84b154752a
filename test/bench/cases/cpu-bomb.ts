/**
 * Case 10: CPU isolation of the bwrap sandbox. Another run's `exec true`, and another
 * run's command that needs ~50 ms of CPU, through the in-process host while one
 * sandbox keeps 256 processes spinning, against the same calls on a quiet machine. The
 * bomb runs under the CPU limit every sandbox gets by default (`MEMQL_EXEC_CPU_LIMIT`,
 * 1 CPU); an info row shows one call under the same bomb with no CPU limit, for scale.
 *
 * The case runs in a `cpu` cgroup of its own, as a node in a container does (see
 * {@link enterCpuGroup}). Quiet and bomb samples are taken in blocks (a bomb takes a moment to start and to
 * kill), alternating block order every round so neither side always runs first.
 *
 * @module
 */

import { BwrapRunner } from '../../../src/sandbox/bwrap/index.js';
import { enterCpuGroup } from '../bench-cgroups.js';
import { BENCH_AUTHORITY, type BenchContext, envelope, expectOk } from '../context.js';
import { type Row, ratioRow, skippedRow } from '../harness.js';
import { summarize } from '../stats.js';

const SPINNERS = 256;
/**
 * 256 busy shells in one sandbox; `ready` once all spin. Each waits for one line on a
 * FIFO it inherited before it spins, so the forking shell is not slowed by its own
 * spinners (under the CPU limit that would take seconds).
 */
const BOMB = [
  'mkfifo /tmp/go && exec 3<>/tmp/go',
  `i=0; while [ "$i" -lt ${SPINNERS} ]; do (read x <&3; while :; do :; done) & i=$((i+1)); done`,
  `i=0; while [ "$i" -lt ${SPINNERS} ]; do echo; i=$((i+1)); done >&3`,
  'echo ready; wait',
].join('\n');

interface Bomb {
  stop(): Promise<void>;
}

/** Starts the bomb in its own sandbox and resolves once every spinner is forked. */
async function startBomb(runner: BwrapRunner, workspaceDir: string): Promise<Bomb> {
  const ac = new AbortController();
  let ready!: () => void;
  const forked = new Promise<void>((resolve) => {
    ready = resolve;
  });
  let seen = '';
  const run = runner.run({
    workspaceDir,
    command: BOMB,
    timeoutMs: 10 * 60_000,
    outputLimitBytes: 4096,
    pidsLimit: SPINNERS * 2,
    signal: ac.signal,
    onOutput: (_stream, chunk) => {
      seen += chunk.toString();
      if (seen.includes('ready')) ready();
    },
  });
  await Promise.race([
    forked,
    run.then((r) => {
      throw new Error(`the bomb ended before it was ready: exit ${r.exitCode ?? r.signal}`);
    }),
  ]);
  return {
    async stop() {
      ac.abort();
      await run;
    },
  };
}

/** About 50 ms of CPU in the shell alone: a command that needs the CPU, not just a slot. */
const WORK = 'i=0; while [ "$i" -lt 50000 ]; do i=$((i+1)); done';

/** How long the call under a bomb with no CPU limit may take before the bomb is stopped. */
const UNLIMITED_BUDGET_MS = 5_000;

/**
 * One `call` under a bomb with no CPU limit: its time, or the budget when it had not
 * answered by then (the bomb is stopped at that point, so the case does not wait out
 * the starvation).
 */
async function unlimitedCall(
  runner: BwrapRunner,
  bombDir: string,
  call: () => Promise<number>,
): Promise<{ ms: number; answered: boolean }> {
  const bomb = await startBomb(runner, bombDir);
  let timer: NodeJS.Timeout | undefined;
  try {
    const pending = call();
    const outcome = await Promise.race([
      pending.then((ms) => ({ ms, answered: true })),
      new Promise<{ ms: number; answered: boolean }>((resolve) => {
        timer = setTimeout(
          () => resolve({ ms: UNLIMITED_BUDGET_MS, answered: false }),
          UNLIMITED_BUDGET_MS,
        );
      }),
    ]);
    await bomb.stop();
    await pending;
    return outcome;
  } finally {
    clearTimeout(timer);
    await bomb.stop();
  }
}

/** Per-command samples of one phase (quiet, or under one kind of bomb). */
interface Samples {
  trueMs: number[];
  workMs: number[];
}

export async function cpuBomb(ctx: BenchContext): Promise<Row[]> {
  const name = '10 cpu bomb';
  // First: the runners below find their parent group (the node's own) when they open.
  const leave = await enterCpuGroup();
  if (!leave) return [skippedRow(name, 'needs root and a cgroup v1 cpu controller')];
  try {
    return await measure(ctx, name);
  } finally {
    await leave();
  }
}

async function measure(ctx: BenchContext, name: string): Promise<Row[]> {
  const limited = new BwrapRunner({ logger: ctx.log });
  const probe = await limited.probe();
  if (!probe.ok || probe.warnings?.length) {
    return [skippedRow(name, probe.ok ? (probe.warnings?.join('; ') ?? '') : probe.reason)];
  }
  const unlimited = new BwrapRunner({ logger: ctx.log, cpus: null });
  const { db } = await ctx.openDb();
  const { host } = await ctx.host(db);
  const [runId] = await ctx.runs(db, 1);
  const bombDir = await ctx.dir('bomb-ws');
  const exec = async (command: string): Promise<number> => {
    const start = performance.now();
    const r = await host.handleDispatch(envelope(runId!, 'exec', { command }), BENCH_AUTHORITY);
    const ms = performance.now() - start;
    expectOk(r, command);
    return ms;
  };
  const block = async (into: Samples, count: number, bombWith: BwrapRunner | null) => {
    const bomb = bombWith ? await startBomb(bombWith, bombDir) : null;
    try {
      for (let i = 0; i < count; i++) {
        into.trueMs.push(await exec('true'));
        into.workMs.push(await exec(WORK));
      }
    } finally {
      await bomb?.stop();
    }
  };

  await block({ trueMs: [], workMs: [] }, 2, null);
  const rounds = ctx.pick(2, 3);
  const perBlock = ctx.pick(4, 8);
  const quiet: Samples = { trueMs: [], workMs: [] };
  const bombed: Samples = { trueMs: [], workMs: [] };
  for (let round = 0; round < rounds; round++) {
    const first = round % 2 === 0;
    await block(first ? quiet : bombed, perBlock, first ? null : limited);
    await block(first ? bombed : quiet, perBlock, first ? limited : null);
  }
  // Without a limit the node itself (in the same group as the spinners) gets about
  // 1/257 of the CPU: one call, cut off at a budget so the case stays short.
  const free = await unlimitedCall(unlimited, bombDir, () => exec('true'));
  const p99Ratio = (s: number[], b: number[]) => (summarize(s).p99 / summarize(b).p99).toFixed(2);
  const how = `${rounds} rounds of ${perBlock} quiet and ${perBlock} bombed calls of each, block order alternating; the bomb is ${SPINNERS} \`while :; do :; done\` shells in one bwrap sandbox`;
  const row = (
    subject: string,
    target: string,
    subjectMs: number[],
    baselineMs: number[],
    note: string,
  ) =>
    ratioRow(
      { case: name, subject, baseline: `the same, quiet`, unit: 'ms', target, note },
      subjectMs,
      baselineMs,
      null,
    );
  return [
    row(
      `exec true, ${SPINNERS} spinners in another sandbox (limit 1 CPU)`,
      'info (p50 ratio; p99 ratio in the note)',
      bombed.trueMs,
      quiet.trueMs,
      `p99 ratio ${p99Ratio(bombed.trueMs, quiet.trueMs)}; ${how}, under MEMQL_EXEC_CPU_LIMIT's default`,
    ),
    row(
      `exec of ~50 ms shell CPU work, same bomb (limit 1 CPU)`,
      'info (p50 ratio; p99 ratio in the note)',
      bombed.workMs,
      quiet.workMs,
      `p99 ratio ${p99Ratio(bombed.workMs, quiet.workMs)}; \`${WORK}\``,
    ),
    row(
      'exec true, same bomb, no CPU limit',
      'info (what the limit prevents)',
      [free.ms],
      quiet.trueMs,
      free.answered
        ? 'one call, for scale'
        : `one call, for scale; no answer within ${UNLIMITED_BUDGET_MS / 1000} s, when the bomb was stopped: the figure is that budget, a lower bound`,
    ),
  ];
}
