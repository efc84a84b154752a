/**
 * `npm run soak -- --mode=pauses`: what becomes of commands across Postgres pauses.
 * Two workbench processes and an agent on a Postgres cluster this soak starts; each
 * round queues commands on a run of each replica (some running, the rest queued
 * behind them, each sleeping a while, writing a file and exiting with its own code),
 * freezes the whole cluster (SIGSTOP of the postmaster and its backends) for
 * `--pause-ms`, thaws it, and waits for every command to end. Then each command is
 * checked: completed with its own exit code and its file kept, lost
 * (`command_lost`), queued again on the way (a second `queued` event), or anything else.
 *
 *   npm run soak -- --mode=pauses --pauses=3 --pause-ms=10000 --liveness-ms=3000 --lease-ms=4000
 *
 * Prints a JSON summary; exits 1 when a command was lost or did not keep its outcome.
 *
 * @module
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { getCommand, listAuditEvents } from '../../src/store/index.js';
import { DurableMesh } from '../support/durable-mesh.js';
import type { HarnessOutcome } from '../support/mesh-harness.js';
import { startPgCluster } from '../support/pg-cluster.js';
import { parseArgs, teardowns } from './soak-support.js';

const NODES = ['wb-a', 'wb-b'];

/** One command of a round, and what the soak expects of it. */
interface Tracked {
  id: string;
  runId: string;
  path: string;
  exit: number;
  /** Its status just before the pause: `running` or `queued`. */
  before: string;
  call: Promise<HarnessOutcome | undefined>;
}

export async function soakPauses(argv: readonly string[]): Promise<void> {
  const args = parseArgs(argv, {
    pauses: 3,
    'pause-ms': 10_000,
    'liveness-ms': 3000,
    'lease-ms': 4000,
    'per-run': 4,
  });
  const cleanup = teardowns();
  const began = Date.now();
  const cluster = await startPgCluster();
  cleanup.t.teardown(() => cluster.stop());
  const mesh = await DurableMesh.start(cleanup.t, {
    store: 'fs',
    nodes: NODES,
    serverUrl: cluster.url(),
    env: {
      MEMQL_NODE_LIVENESS_MS: String(args['liveness-ms']),
      MEMQL_COMMAND_LEASE_MS: String(args['lease-ms']),
      MEMQL_COMMAND_CONCURRENCY: '2',
    },
  });
  const tally: Record<string, Record<string, number>> = { running: {}, queued: {} };
  const failures: string[] = [];
  try {
    for (let round = 0; round < args.pauses; round++) {
      const tracked: Tracked[] = [];
      for (const nodeId of NODES) {
        const runId = await mesh.run(`run-pause-${round}-${nodeId}`, nodeId);
        for (let i = 0; i < args['per-run']; i++) {
          const exit = (round + i) % 4;
          const path = `p-${i}.txt`;
          // Some end while the database is frozen, some after it thaws.
          const seconds = (2 + ((i * 7 + round * 3) % 13)).toFixed(1);
          const command = `sleep ${seconds}; echo ${runId}-${i} > ${path}; exit ${exit}`;
          const call = mesh.dispatch(runId, 'exec', { command }).catch(() => undefined);
          // Each one queued before the next, so the order (and what runs) is known.
          let id: string | undefined;
          while (id === undefined) {
            const rows = await mesh.db.query<{ id: string }>(
              'select id from workspace_command where run_id = $1 order by queued_at',
              [runId],
            );
            id = rows[i]?.id;
            if (id === undefined) await sleep(20);
          }
          tracked.push({ id, runId, path, exit, before: '', call });
        }
      }
      for (const c of tracked) c.before = (await getCommand(mesh.db, c.id))?.status ?? '?';
      await cluster.pause();
      const pausedAt = Date.now();
      while (Date.now() - pausedAt < args['pause-ms']) await sleep(50);
      cluster.resume();
      const deadline = Date.now() + 180_000;
      for (const c of tracked) {
        while (Date.now() < deadline) {
          const row = await getCommand(mesh.db, c.id);
          if (row && row.status !== 'running' && row.status !== 'queued') break;
          await sleep(100);
        }
      }
      await Promise.all(tracked.map((c) => c.call));
      for (const c of tracked) {
        const row = await getCommand(mesh.db, c.id);
        const events = (await listAuditEvents(mesh.db, { commandId: c.id })).map(
          (e) => e.eventType,
        );
        const requeued = events.filter((e) => e === 'workspace_command.queued').length > 1;
        const read = await mesh.dispatch(c.runId, 'fs_read', { path: c.path });
        const kept =
          read.result.ok &&
          (read.result.payload as { content: string }).content ===
            `${c.runId}-${c.path.slice(2, -4)}\n`;
        let outcome: string;
        if (row?.errorCode === 'command_lost') outcome = 'lost';
        else if (row?.status === 'completed' && row.exitCode === c.exit && kept) {
          outcome = requeued ? 'completed_after_requeue' : 'completed';
        } else
          outcome = `other:${row?.status}/${row?.errorCode}/exit ${row?.exitCode}/kept ${kept}`;
        const side = tally[c.before === 'running' ? 'running' : 'queued']!;
        side[outcome] = (side[outcome] ?? 0) + 1;
        if (!outcome.startsWith('completed')) failures.push(`${c.id} (${c.before}): ${outcome}`);
      }
      process.stderr.write(`pause ${round + 1}/${args.pauses}: ${JSON.stringify(tally)}\n`);
    }
    const summary = {
      pauses: args.pauses,
      pauseMs: args['pause-ms'],
      settings: {
        livenessMs: args['liveness-ms'],
        leaseMs: args['lease-ms'],
        workerConcurrency: 2,
        commandsPerReplicaPerPause: args['per-run'],
      },
      byStatusAtPause: tally,
      lostOrWrong: failures,
      seconds: Math.round((Date.now() - began) / 1000),
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    process.exitCode = failures.length === 0 ? 0 : 1;
    await mesh.stop();
  } finally {
    if (cluster.paused) cluster.resume();
    for (const wb of mesh.started) if (wb.proc.alive) wb.proc.child.kill('SIGKILL');
    await cleanup.run();
  }
}
