/**
 * Case 2: `exec true` through the mesh (agent in this process, workbench node in its
 * own) against the same call in-process, and the floor under it: a bare grpc-js
 * round trip of a Request frame and a Response frame of the same sizes between two
 * processes (`grpc-floor.ts`). The target is on the mesh's added p50 (mesh minus
 * in-process) against the floor's p50: at most 1.5 times it, quiet and again under a
 * CPU load the case starts itself (busy-loop processes, sampled once the 1-minute load
 * average has reached 4). `fs_read` of a small file is measured quiet, because its call
 * is short enough that the mesh's own cost is visible above the noise. Both sides log
 * as a node does (info, into a file), so the lines a command writes are on both.
 *
 * @module
 */

import { join } from 'node:path';
import pino from 'pino';
import { envelopeToWire } from '../../../src/contract/index.js';
import { createLogger } from '../../../src/telemetry/index.js';
import { BENCH_AUTHORITY, type BenchContext, envelope, expectOk } from '../context.js';
import { loadAverage, startCpuLoad } from '../cpu-load.js';
import { startGrpcFloor } from '../grpc-floor.js';
import { type Row, ratioRow, sampleInterleaved } from '../harness.js';
import { startAgent, startWorkbenchProcess } from '../mesh.js';
import { describePhases, PhaseLog } from '../phases.js';
import { summarize } from '../stats.js';

/** The mesh may add at most this many times the floor's p50. */
const FLOOR_FACTOR = 1.5;
/** The load phase samples once the 1-minute load average is at least this. */
const LOAD_TARGET = 4;
/** Busy loops started for the load phase. */
const SPINNERS = 6;

export async function execMesh(ctx: BenchContext): Promise<Row[]> {
  const { db, url } = await ctx.openDb();
  // Both sides log as a node does, at info into a file: the workbench process writes its
  // lines, and what they cost is no part of the mesh.
  const logFile = join(await ctx.dir('in-process-log'), 'node.log');
  const log = createLogger({
    level: 'info',
    nodeId: 'bench-in-process',
    nodeType: 'workbench',
    destination: pino.destination({ dest: logFile, sync: true }),
  });
  const { host } = await ctx.host(db, {}, undefined, log);
  const [localRun, remoteRun] = await ctx.runs(db, 2);
  const wb = await startWorkbenchProcess(ctx, url, [remoteRun!]);
  const agent = await startAgent(ctx, wb);
  // Phases come from the command rows; the node process shares the database only on
  // real Postgres.
  const remotePhases = new PhaseLog();
  const localPhases = new PhaseLog();
  let lastResult: unknown;
  const remote = async (action: string, args: Record<string, unknown>, phases = true) => {
    const start = performance.now();
    const out = await agent.dispatch(envelope(remoteRun!, action, args), BENCH_AUTHORITY);
    const total = performance.now() - start;
    if (out.route.kind !== 'remote')
      throw new Error(`expected a remote route, got ${out.route.kind}`);
    expectOk(out.result, `${action} through the mesh`);
    lastResult = out.result;
    if (phases && action === 'exec' && url !== null) remotePhases.note(out.result, total);
    return total;
  };
  const local = async (action: string, args: Record<string, unknown>, phases = true) => {
    const start = performance.now();
    const r = await host.handleDispatch(envelope(localRun!, action, args), BENCH_AUTHORITY);
    const total = performance.now() - start;
    expectOk(r, `${action} in-process`);
    if (phases && action === 'exec') localPhases.note(r, total);
    return total;
  };
  const file = { path: 'small.txt', content: 'x'.repeat(100) };
  await remote('fs_write', file);
  await local('fs_write', file);

  // The floor's frames are the sizes of the mesh's exec call: its envelope on the wire
  // and the JSON of its result.
  await remote('exec', { command: 'true' }, false);
  const requestPayload = Buffer.from(
    JSON.stringify(envelopeToWire(envelope(remoteRun!, 'exec', { command: 'true' }))),
  );
  const responseBytes = Buffer.byteLength(
    JSON.stringify((lastResult as { payload?: unknown }).payload ?? null),
  );
  const floor = await startGrpcFloor(ctx, responseBytes);
  const floorTrip = async () => {
    const start = performance.now();
    await floor.roundTrip(requestPayload);
    return performance.now() - start;
  };

  // The difference of two medians of about 10 ms is the figure: 200 pairs keep its noise
  // well under the target (60 moved it by more than 1 ms between runs).
  const execSamples = ctx.pick(15, 200);
  const quietLoad = await loadAverage();
  const [meshExec, localExec, floorQuiet] = await sampleInterleaved(
    [
      { name: 'mesh', run: () => remote('exec', { command: 'true' }) },
      { name: 'local', run: () => local('exec', { command: 'true' }) },
      { name: 'floor', run: floorTrip },
    ],
    { samples: execSamples, warmup: 3 },
  );
  const [meshRead, localRead] = await sampleInterleaved(
    [
      { name: 'mesh', run: () => remote('fs_read', { path: 'small.txt' }) },
      { name: 'local', run: () => local('fs_read', { path: 'small.txt' }) },
    ],
    { samples: ctx.pick(50, 300), warmup: 10 },
  );
  const [meshPhases, inProcessPhases] = [
    await remotePhases.read(db, execSamples),
    await localPhases.read(db, execSamples),
  ];

  // The same three under load.
  const load = await startCpuLoad(ctx, SPINNERS, LOAD_TARGET);
  const [meshLoaded, localLoaded, floorLoaded] = await sampleInterleaved(
    [
      { name: 'mesh', run: () => remote('exec', { command: 'true' }, false) },
      { name: 'local', run: () => local('exec', { command: 'true' }, false) },
      { name: 'floor', run: floorTrip },
    ],
    { samples: execSamples, warmup: 3 },
  );
  const loadEnd = await loadAverage();
  await load.stop();

  const p50 = (xs: number[] | undefined) => summarize(xs ?? []).median;
  const added = (sub: number[] | undefined, base: number[] | undefined) => p50(sub) - p50(base);
  const against = (
    sub: number[] | undefined,
    base: number[] | undefined,
    fl: number[] | undefined,
  ) =>
    `added p50 = ${added(sub, base).toFixed(2)} ms, floor p50 = ${p50(fl).toFixed(2)} ms, added / floor = ${(added(sub, base) / p50(fl)).toFixed(2)}`;
  const floorHolds =
    (sub: number[] | undefined, fl: number[] | undefined) =>
    (_r: number, s: { median: number }, b: { median: number }) =>
      s.median - b.median <= FLOOR_FACTOR * p50(fl) && sub !== undefined;
  const target = `added p50 <= ${FLOOR_FACTOR} x floor p50`;
  const loadNote = `under load: ${load.spinners} busy-loop processes (sh while-loops), sampled once the 1-minute load average reached ${load.reached.toFixed(1)} (after ${load.waitedS.toFixed(0)} s; ${loadEnd.toFixed(1)} at the end), stopped after`;
  const floorRow = (subject: string, xs: number[] | undefined, note: string): Row => ({
    case: '2 exec via mesh',
    subject,
    baseline: '-',
    unit: 'ms',
    subjectStats: summarize(xs ?? []),
    baselineStats: null,
    ratio: null,
    target: 'info (the floor)',
    holds: null,
    note,
  });
  const floorShape = `one Request frame (${requestPayload.length} B payload) and its Response (${responseBytes} B) over an open stream to a child process serving NodeService.Stream with grpc-js alone, the mesh's proto, codec and channel options`;
  return [
    ratioRow(
      {
        case: '2 exec via mesh',
        subject: 'exec true, agent -> workbench process',
        baseline: 'exec true, in-process',
        unit: 'ms',
        target,
        note: `${against(meshExec, localExec, floorQuiet)}; load average ${quietLoad.toFixed(1)} at the start; the workbench process has its own database handle (${ctx.database.kind}). Mesh ${url === null ? '(phases need real Postgres)' : describePhases(meshPhases)}. In-process ${describePhases(inProcessPhases)}`,
      },
      meshExec ?? [],
      localExec ?? [],
      floorHolds(meshExec, floorQuiet),
    ),
    floorRow('bare grpc-js bidi round trip, two processes', floorQuiet, floorShape),
    ratioRow(
      {
        case: '2 exec via mesh',
        subject: `exec true, agent -> workbench process, load >= ${LOAD_TARGET}`,
        baseline: 'exec true, in-process, same load',
        unit: 'ms',
        target,
        note: `${against(meshLoaded, localLoaded, floorLoaded)}; ${loadNote}`,
      },
      meshLoaded ?? [],
      localLoaded ?? [],
      floorHolds(meshLoaded, floorLoaded),
    ),
    floorRow(`bare grpc-js bidi round trip, load >= ${LOAD_TARGET}`, floorLoaded, loadNote),
    ratioRow(
      {
        case: '2 exec via mesh',
        subject: 'fs_read 100 B, agent -> workbench process',
        baseline: 'fs_read 100 B, in-process',
        unit: 'ms',
        target: 'info: added p50 <= 1 ms',
        note: `added p50 = ${added(meshRead, localRead).toFixed(2)} ms`,
      },
      meshRead ?? [],
      localRead ?? [],
      (_r, s, b) => s.median - b.median <= 1,
    ),
  ];
}
