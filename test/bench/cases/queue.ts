/**
 * Case 7: the command queue's enqueue, claim and complete rate (`CommandQueue` with an
 * executor that returns at once, so only the queue is measured: its statements with
 * their audit events, lease, wake-ups and waiters) against a bare `FOR UPDATE SKIP LOCKED`
 * loop on a table of the same shape (`like workspace_command including all`, plus its
 * foreign key): insert, claim, complete, nothing else. Same number of producers and
 * workers. One sample is one batch; the figure is commands per second.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import { CommandQueue } from '../../../src/queue/index.js';
import { provisionWorkspace } from '../../../src/store/index.js';
import { emptyRun } from '../../queue/queue-support.js';
import type { BenchContext } from '../context.js';
import { countingDb, describeTallies } from '../counting-db.js';
import { type Row, ratioRow, sampleInterleaved } from '../harness.js';

const WORKERS = 4;
const PRODUCERS = 4;

export async function queue(ctx: BenchContext): Promise<Row[]> {
  const { db } = await ctx.openDb();
  const [runId] = await ctx.runs(db, 1);
  // As on a host, the queue's node holds the run's workspace: its enqueues need not
  // notify other nodes, whose workers may not claim the run's commands.
  await provisionWorkspace(db, { runId: runId!, nodeId: 'bench-queue', ownerUserId: 'bench' });
  const batch = ctx.pick(200, 500);
  await db.query(
    'create table bench_queue (like workspace_command including all, foreign key (run_id) references run (id))',
  );
  // The queue's statements are counted (the bare loop uses `db` directly).
  const counted = countingDb(db);
  const q = new CommandQueue({
    db: counted.db,
    nodeId: 'bench-queue',
    concurrency: WORKERS,
    leaseMs: 30_000,
    pollIntervalMs: 1_000,
    log: ctx.log,
    execute: async () => emptyRun(),
  });
  q.start();
  ctx.defer(() => q.stop({ graceMs: 2_000 }));

  const produce = async (each: () => Promise<void>) => {
    let left = batch;
    await Promise.all(
      Array.from({ length: PRODUCERS }, async () => {
        while (left > 0) {
          left -= 1;
          await each();
        }
      }),
    );
  };

  let subjectCommands = 0;
  const subject = async () => {
    subjectCommands += batch;
    const waits: Promise<unknown>[] = [];
    await produce(async () => {
      const { command } = await q.enqueue({
        runId: runId!,
        ownerUserId: 'bench',
        request: { command: 'true' },
        timeoutMs: 10_000,
      });
      // As the host waits: with the row the enqueue returned, so it is not read back.
      waits.push(q.waitForTerminal(command.id, { row: command }));
    });
    await Promise.all(waits);
  };

  const bare = async () => {
    let done = 0;
    let producing = true;
    const producers = produce(async () => {
      await db.query(
        `insert into bench_queue (id, run_id, owner_user_id, request, timeout_ms)
         values ($1, $2, 'bench', $3::text::jsonb, 10000)`,
        [randomUUID(), runId, JSON.stringify({ command: 'true' })],
      );
    }).finally(() => {
      producing = false;
    });
    const worker = async () => {
      while (done < batch) {
        const claimed = await db.query<{ id: string }>(
          `update bench_queue c set status = 'running', lease_owner = 'bare',
             lease_expires_at = now() + interval '30 seconds', attempts = c.attempts + 1,
             started_at = now()
           where c.id = (select id from bench_queue where status = 'queued'
                         order by queued_at, id limit 1 for update skip locked)
           returning id`,
        );
        const id = claimed[0]?.id;
        if (id === undefined) {
          if (!producing && done >= batch) return;
          await new Promise((r) => setImmediate(r));
          continue;
        }
        await db.query(
          `update bench_queue set status = 'completed', exit_code = 0, finished_at = now(),
             lease_owner = null, lease_expires_at = null where id = $1 and status = 'running'`,
          [id],
        );
        done += 1;
      }
    };
    await Promise.all([producers, ...Array.from({ length: WORKERS }, worker)]);
  };

  const [subMs, bareMs] = await sampleInterleaved(
    [
      { name: 'queue', run: subject },
      { name: 'bare', run: bare },
    ],
    { samples: ctx.pick(3, 5), warmup: 1 },
  );
  const statements = describeTallies(counted.tallies, subjectCommands);
  const rate = (ms: number[] | undefined) => (ms ?? []).map((m) => batch / (m / 1000));
  const onPg = ctx.database.kind === 'postgres';
  return [
    ratioRow(
      {
        case: '7 queue',
        subject: `CommandQueue enqueue+claim+complete, no-op executor`,
        baseline: 'bare SKIP LOCKED insert/claim/complete',
        unit: 'cmd/s',
        target: 'ratio >= 0.5',
        note: `${batch} commands per sample, ${PRODUCERS} producers, ${WORKERS} workers; ${onPg ? 'real Postgres' : 'embedded PGlite: the issue asks for real Postgres, set MEMQL_DATABASE_URL'}; the queue also writes 3 audit events per command, each in the statement of its move (enqueue, claim of up to ${WORKERS} commands, finish), and notifies other nodes' workers in the enqueue (Postgres); waiters that hold the enqueued row are not read back, and rows are polled for all waiters in one statement per poll period; the live counts are read at most once a second. Statements per command through the queue (measured): ${statements}; the bare loop: 1 insert, 1 claim update, 1 complete update`,
      },
      rate(subMs),
      rate(bareMs),
      (r) => r >= 0.5,
    ),
  ];
}
