/**
 * `npm run soak -- --mode=growth`: whether a node's cost stays flat under long mixed
 * load. An agent node serving the HTTP API and two workbench replicas, each its own
 * process, on the bwrap runner and a Postgres cluster the soak starts (the server's
 * defaults, autovacuum included). `--concurrency` loops make runs through the API
 * until `--minutes` have passed, each run written, read, listed, given small commands
 * (a background process one run in four, a command that fails, times out or is
 * refused), then ended and deleted (`growth-load.ts`).
 *
 * Every `--sample-seconds` the soak reads each node process's RSS and descriptors, the
 * replicas' sandbox cgroups and sandboxes, the entries of each workbench root, and the
 * database's size and command and audit rows (`growth-sample.ts`), and the heap each
 * node's last full collection left (`growth-logs.ts`). After the warm-up
 * (`--warmup-minutes`, default 10, or a sixth of a shorter run) every series is held to
 * its bound (`growth-bounds.ts`). Once the load stops and the last run is deleted: no
 * sandbox or cgroup beyond the warm pools', no run directory, no command or audit row
 * of a deleted run.
 *
 *   npm run soak -- --mode=growth --minutes=60 --concurrency=8 --sample-seconds=30 --store=fs|s3
 *
 * Prints a line per sample to stderr as it goes and a JSON summary (samples, bounds,
 * pass or fail per series) to stdout; exits 1 when a bound is broken, a call had an
 * outcome its step did not expect, or the final check fails.
 *
 * @module
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { WorkbenchClient } from '../../src/client/index.js';
import { createApiToken } from '../../src/store/index.js';
import { DurableMesh } from '../support/durable-mesh.js';
import { eventually } from '../support/mesh.js';
import type { NodeProcess } from '../support/node-process.js';
import { startPgCluster } from '../support/pg-cluster.js';
import { checkSeries, growthBounds, type Sample, sandboxLimit } from './growth-bounds.js';
import { GrowthLoad, Tally } from './growth-load.js';
import { drainOutput, type FullCollections } from './growth-logs.js';
import {
  cgroupParents,
  countGroups,
  databaseCost,
  processCost,
  rootEntries,
  rowsOfRuns,
  sandboxCensus,
  tableCosts,
} from './growth-sample.js';
import { parseArgs, teardowns } from './soak-support.js';

const REPLICAS = ['wb-a', 'wb-b'];
/** `MEMQL_SANDBOX_WARM_POOL` of each replica: the default, set so the bounds know it. */
const WARM_POOL = 4;
const MiB = 1024 * 1024;

export async function soakGrowth(argv: readonly string[]): Promise<void> {
  const args = parseArgs(argv, {
    minutes: 60,
    'warmup-minutes': -1,
    'sample-seconds': 30,
    concurrency: 8,
    store: 'fs',
  });
  if (args.store !== 'fs' && args.store !== 's3') throw new Error('--store is fs or s3');
  const warmupMinutes =
    args['warmup-minutes'] >= 0 ? args['warmup-minutes'] : Math.min(10, args.minutes / 6);
  const cleanup = teardowns();
  // A cluster of its own with the server's defaults: autovacuum reclaims deleted rows
  // there, as on any deployed Postgres (the shared test server runs without it).
  const cluster = await startPgCluster();
  cleanup.t.teardown(() => cluster.stop());
  const mesh = await DurableMesh.start(cleanup.t, {
    store: args.store,
    serverUrl: cluster.url(),
    env: { MEMQL_RUNNER: 'bwrap', MEMQL_SANDBOX_WARM_POOL: String(WARM_POOL) },
    nodeArgs: ['--trace-gc'],
  });
  let api: { proc: NodeProcess; url: string } | null = null;
  try {
    api = await mesh.startApiAgent();
    const { token } = await createApiToken(mesh.db, 'alice');
    const client = new WorkbenchClient({ baseUrl: api.url, token });
    await eventually(
      'the API agent reaches both replicas',
      async () => (await client.fleet()).replicas.filter((r) => r.healthy).length === 2,
      60_000,
    );
    const procs = new Map<string, NodeProcess>([
      ['agent', api.proc],
      ...REPLICAS.map((r) => [r, mesh.replica(r).proc] as const),
    ]);
    const replicaPids = new Set(REPLICAS.map((r) => mesh.replica(r).proc.child.pid!));
    const parents = await cgroupParents([...replicaPids]);
    const inputs = {
      processes: [...procs.keys()],
      replicas: REPLICAS,
      concurrency: args.concurrency,
      warmPool: WARM_POOL,
    };
    const bounds = growthBounds(inputs);

    const tally = new Tally();
    const load = new GrowthLoad(client, tally);
    const runIds: string[] = [];
    const errors: Record<string, number> = {};
    const collections = new Map<string, FullCollections>();
    const others = new Set<string>();
    const began = Date.now();
    const endAt = began + args.minutes * 60_000;
    const warmEnd = began + warmupMinutes * 60_000;
    let next = 0;
    let running = args.concurrency;

    const take = async (): Promise<Sample> => {
      const values: Record<string, number> = {};
      drainOutput(procs, errors, collections);
      for (const [name, proc] of procs) {
        const cost = await processCost(proc.child.pid!);
        values[`rss.${name}`] = cost.rss;
        values[`fds.${name}`] = cost.fds;
        const heap = collections.get(name)?.heapAfter;
        if (heap != null) values[`heapAfterGc.${name}`] = heap;
      }
      values.cgroups = await countGroups(parents, replicaPids);
      values.sandboxes = 0;
      values.sandboxProcesses = 0;
      for (const r of REPLICAS) {
        const census = await sandboxCensus(new Set([mesh.replica(r).proc.child.pid!]));
        values[`sandboxes.${r}`] = census.sandboxes;
        values.sandboxes += census.sandboxes;
        values.sandboxProcesses += census.processes;
      }
      for (const r of REPLICAS) {
        const entries = await rootEntries(mesh.workbenchRoot(r));
        values[`dirs.${r}`] = entries.pool + entries.others.length;
        values[`poolDirs.${r}`] = entries.pool;
        values[`runDirs.${r}`] = entries.others.filter((n) => !n.startsWith('.')).length;
        // By kind: a staging directory's name ends in its creator's pid and a random part.
        for (const n of entries.others) {
          if (n.startsWith('.')) others.add(`${r}/${n.replace(/-\d+-[0-9a-f]+$/, '-*')}`);
        }
      }
      const db = await databaseCost(mesh.db);
      values.dbBytes = db.bytes;
      values['rows.workspace_command'] = db.commands;
      values['rows.audit_event'] = db.audit;
      values.runs = runIds.length;
      values.calls = tally.total;
      values.unexpected = tally.unexpectedCount;
      const at = Date.now();
      return { t: Math.round((at - began) / 1000), warm: at <= warmEnd, values };
    };

    const samples: Sample[] = [];
    const show = (s: Sample) => {
      const v = s.values;
      const mib = (n: number | undefined) => `${((n ?? 0) / MiB).toFixed(0)}M`;
      const cells = [
        `${String(s.t).padStart(5)}s${s.warm ? '*' : ' '}`,
        ...[...procs.keys()].map(
          (p) => `${p} ${mib(v[`rss.${p}`])}/${v[`fds.${p}`]}fd/gc ${mib(v[`heapAfterGc.${p}`])}`,
        ),
        `cg ${v.cgroups} sbx ${v.sandboxes}/${v.sandboxProcesses}p`,
        `dirs ${REPLICAS.map((r) => `${v[`dirs.${r}`]}(${v[`poolDirs.${r}`]}p ${v[`runDirs.${r}`]}r)`).join(' ')}`,
        `db ${mib(v.dbBytes)} cmd ${v['rows.workspace_command']} audit ${v['rows.audit_event']}`,
        `runs ${v.runs} calls ${v.calls} unexpected ${v.unexpected}`,
      ];
      process.stderr.write(`${cells.join(' | ')}\n`);
    };
    process.stderr.write(
      `growth soak: ${args.minutes} min, warm-up ${warmupMinutes} min (* marks its samples), concurrency ${args.concurrency}; per process RSS/descriptors/heap after the last full collection\n`,
    );

    const loop = async () => {
      while (Date.now() < endAt) {
        const id = await load.run(next++);
        if (id !== undefined) runIds.push(id);
      }
      running -= 1;
    };
    const sampler = async () => {
      for (let k = 0; running > 0; k++) {
        const due = began + k * args['sample-seconds'] * 1000;
        while (running > 0 && Date.now() < due) await sleep(Math.min(1000, due - Date.now()));
        if (running === 0) break;
        const s = await take();
        samples.push(s);
        show(s);
      }
    };
    await Promise.all([sampler(), ...Array.from({ length: args.concurrency }, loop)]);
    const loadSeconds = Math.round((Date.now() - began) / 1000);

    // Once everything is deleted: the pools' sandboxes only, no run directory, no row.
    const pools = REPLICAS.length * WARM_POOL;
    let final: Sample | null = null;
    let leftRows = { commands: -1, audit: -1 };
    const settled = () =>
      final !== null &&
      final.values.cgroups! <= pools &&
      final.values.sandboxes! <= pools &&
      REPLICAS.every((r) => final!.values[`runDirs.${r}`] === 0) &&
      leftRows.commands === 0 &&
      leftRows.audit === 0;
    const settleUntil = Date.now() + 120_000;
    while (Date.now() < settleUntil) {
      final = await take();
      leftRows = await rowsOfRuns(mesh.db, runIds);
      if (settled()) break;
      await sleep(1000);
    }
    show(final!);

    const results = Object.entries(bounds).map(([series, bound]) =>
      checkSeries(samples, series, bound),
    );
    const broken = results.filter((r) => !r.pass).map((r) => r.series);
    const finalCheck = {
      pass: settled(),
      bound: `cgroups and sandboxes ≤ R × W = ${pools}; no run directory; no row of a deleted run`,
      cgroups: final!.values.cgroups,
      sandboxes: final!.values.sandboxes,
      byReplica: Object.fromEntries(
        REPLICAS.map((r) => [
          r,
          {
            sandboxes: final!.values[`sandboxes.${r}`],
            poolDirs: final!.values[`poolDirs.${r}`],
            runDirs: final!.values[`runDirs.${r}`],
            entries: final!.values[`dirs.${r}`],
          },
        ]),
      ),
      rowsOfDeletedRuns: leftRows,
      tables: await tableCosts(mesh.db),
    };
    // A process's heap series starts with its first full collection.
    const series = [...new Set(samples.flatMap((s) => Object.keys(s.values)))];
    const summary = {
      store: args.store,
      minutes: args.minutes,
      warmupMinutes,
      sampleSeconds: args['sample-seconds'],
      concurrency: args.concurrency,
      warmPool: WARM_POOL,
      sandboxLimit: sandboxLimit(inputs),
      loadSeconds,
      runs: runIds.length,
      calls: tally.total,
      callsByOutcome: tally.calls,
      unexpected: tally.unexpected,
      unexpectedExamples: tally.examples,
      nodeErrors: errors,
      fullCollections: Object.fromEntries(collections),
      otherRootEntries: [...others],
      results,
      broken,
      final: finalCheck,
      samples: { series: ['t', 'warm', ...series], rows: samples.map(row) },
    };
    function row(s: Sample) {
      return [s.t, s.warm, ...series.map((k) => s.values[k] ?? null)];
    }
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    process.exitCode =
      broken.length === 0 && tally.unexpectedCount === 0 && finalCheck.pass ? 0 : 1;
    await api.proc.stop('SIGTERM');
    await mesh.stop();
  } finally {
    if (api?.proc.alive) api.proc.child.kill('SIGKILL');
    for (const wb of mesh.started) if (wb.proc.alive) wb.proc.child.kill('SIGKILL');
    await cleanup.run();
  }
}
