/**
 * `npm run soak -- --mode=recovery`: how long a killed replica's running command
 * takes to reach a terminal row. Three workbench processes and an agent on the test
 * Postgres, a stream of calls on another run as load; each round kills (SIGKILL) the
 * replica running a command, starts it again (as a Deployment would), and measures,
 * on the database's own timestamps, the time from the killed worker's last heartbeat
 * to the command's terminal row. With `--young=true` the two survivors are restarted
 * one after the other just before each kill, so they are seconds old when it happens.
 *
 *   npm run soak -- --mode=recovery --kills=20 --young=true --liveness-ms=3000
 *
 * Prints a JSON summary (max, p50, p95 of the recovery times and the stated bound:
 * one liveness window plus one recovery period); exits 1 when a command did not end.
 *
 * @module
 */

import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { recoveryBoundMs, recoveryPeriodMs } from '../../src/queue/index.js';
import { getCommand } from '../../src/store/index.js';
import { DurableMesh } from '../support/durable-mesh.js';
import type { NodeProcess } from '../support/node-process.js';
import { parseArgs, percentile, teardowns } from './soak-support.js';

const NODES = ['wb-a', 'wb-b', 'wb-c'];
const LEASE_MS = 30_000;

/** Waits for `check`, polling; false after `ms`. */
async function until(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(50);
  }
  return false;
}

/** One kill's measurement. */
interface Round {
  victim: string;
  /** From the killed worker's last heartbeat to the terminal row, by the database's clock. */
  recoveryMs: number | null;
  /** From the kill to the terminal row, as this process saw it. */
  sinceKillMs: number | null;
  /** How long each survivor had been up when the kill came. */
  survivorAgesMs: Record<string, number>;
  status: string;
  recoveredBy: string | null;
}

export async function soakRecovery(argv: readonly string[]): Promise<void> {
  const args = parseArgs(argv, { kills: 20, young: true, 'liveness-ms': 3000, load: 4 });
  const livenessMs = args['liveness-ms'];
  const cleanup = teardowns();
  const began = Date.now();
  const mesh = await DurableMesh.start(cleanup.t, {
    store: 'fs',
    nodes: NODES,
    env: { MEMQL_NODE_LIVENESS_MS: String(livenessMs), MEMQL_COMMAND_LEASE_MS: String(LEASE_MS) },
    args: ['--shutdown-grace-ms=2000'],
  });
  const upSince = new Map<NodeProcess, number>();
  for (const wb of mesh.started) upSince.set(wb.proc, Date.now());
  const start = async (nodeId: string) => {
    const wb = await mesh.restart(nodeId);
    upSince.set(wb.proc, Date.now());
    await mesh.untilHealthy(NODES.filter((n) => mesh.replica(n).proc.alive));
  };
  const rounds: Round[] = [];
  const load: Record<string, number> = {};
  let stopLoad = false;
  try {
    await mesh.run('run-load', 'wb-b');
    const loader = async (w: number) => {
      for (let i = 0; !stopLoad; i++) {
        const r =
          i % 2 === 0
            ? await mesh.dispatch('run-load', 'fs_write', { path: `l/${w}-${i}`, content: 'x' })
            : await mesh.dispatch('run-load', 'exec', { command: `sleep 0.2; echo ${i}` });
        const key = r.result.ok ? 'ok' : r.result.errorCode;
        load[key] = (load[key] ?? 0) + 1;
      }
    };
    const loaders = Array.from({ length: args.load }, (_, w) =>
      loader(w).catch(() => {
        load.no_answer = (load.no_answer ?? 0) + 1;
      }),
    );

    for (let i = 0; i < args.kills; i++) {
      const victim = NODES[i % NODES.length]!;
      const survivors = NODES.filter((n) => n !== victim);
      if (args.young) {
        for (const n of survivors) {
          await mesh.replica(n).proc.stop('SIGTERM', 60_000);
          await start(n);
        }
      }
      const run = await mesh.run(`run-kill-${i}`, victim);
      const call = mesh
        .dispatch(run, 'exec', { command: 'touch started; sleep 600' })
        .catch(() => undefined);
      const dir = join(mesh.workbenchRoot(victim), run, 'started');
      await until(
        () =>
          stat(dir).then(
            () => true,
            () => false,
          ),
        30_000,
      );
      const [row] = await mesh.db.query<{ id: string; lease_owner: string }>(
        'select id, lease_owner from workspace_command where run_id = $1',
        [run],
      );
      const killedAt = Date.now();
      const survivorAgesMs = Object.fromEntries(
        survivors.map((n) => [n, killedAt - (upSince.get(mesh.replica(n).proc) ?? killedAt)]),
      );
      mesh.replica(victim).proc.child.kill('SIGKILL');
      await mesh.replica(victim).proc.exited;
      // Started again at once, as a Deployment would: a young node too.
      await start(victim);
      const ended = await until(
        async () => (await getCommand(mesh.db, row!.id))?.status !== 'running',
        120_000,
      );
      const endedAt = Date.now();
      await call;
      const [times] = await mesh.db.query<{ ms: number }>(
        `select (extract(epoch from (c.finished_at - k.heartbeat_at)) * 1000)::float8 as ms
         from workspace_command c, workbench_worker k where c.id = $1 and k.lease_owner = $2`,
        [row!.id, row!.lease_owner],
      );
      const end = await getCommand(mesh.db, row!.id);
      const recoveredBy =
        mesh.started.find((wb) =>
          wb.proc.lines.some(
            (l) => l.msg === 'workspace_command.recovered_stale' && l.commandId === row!.id,
          ),
        )?.nodeId ?? null;
      rounds.push({
        victim,
        recoveryMs: ended && times ? Math.round(Number(times.ms)) : null,
        sinceKillMs: ended ? endedAt - killedAt : null,
        survivorAgesMs,
        status: `${end?.status}${end?.errorCode ? `/${end.errorCode}` : ''}`,
        recoveredBy,
      });
      process.stderr.write(`kill ${i + 1}/${args.kills}: ${JSON.stringify(rounds.at(-1))}\n`);
    }
    stopLoad = true;
    await Promise.all(loaders);

    const times = rounds.flatMap((r) => (r.recoveryMs === null ? [] : [r.recoveryMs]));
    const period = recoveryPeriodMs(LEASE_MS, livenessMs);
    const summary = {
      kills: args.kills,
      youngSurvivors: args.young,
      settings: { livenessMs, leaseMs: LEASE_MS, recoveryPeriodMs: period },
      boundMs: recoveryBoundMs(livenessMs, period),
      recoveryMs: {
        max: Math.max(...times),
        p50: percentile(times, 50),
        p95: percentile(times, 95),
      },
      notEnded: rounds.filter((r) => r.recoveryMs === null).length,
      outcomes: rounds.reduce<Record<string, number>>((m, r) => {
        m[r.status] = (m[r.status] ?? 0) + 1;
        return m;
      }, {}),
      maxSurvivorAgeAtKillMs: Math.max(...rounds.flatMap((r) => Object.values(r.survivorAgesMs))),
      rounds,
      load,
      seconds: Math.round((Date.now() - began) / 1000),
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    process.exitCode = summary.notEnded === 0 ? 0 : 1;
    await mesh.stop();
  } finally {
    stopLoad = true;
    for (const wb of mesh.started) if (wb.proc.alive) wb.proc.child.kill('SIGKILL');
    await cleanup.run();
  }
}
