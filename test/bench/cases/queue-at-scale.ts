/**
 * Case 18: the queue's statements on a database that has been in use for a while: one
 * holding 1,000,000 finished command rows (100 per run, 10,000 runs; each with its
 * three audit events) against an empty one, on the same server. One sample is one
 * command through the three statements a worker makes of it (enqueue, claim, finish:
 * `enqueueCommand`, `claimCommands` with the node's affinity, `finishCommand`, each
 * writing its audit event), each timed alone; the two databases alternate, the order
 * turning every round. The rows are made on the server with `INSERT ... SELECT
 * generate_series`, then vacuumed and analysed as autovacuum would have. Also read:
 * the plans of the claim and of the retention deletes on the big database, which must
 * walk their indexes.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import {
  claimCommands,
  type Db,
  deleteExpiredAuditEvents,
  deleteExpiredCommands,
  enqueueCommand,
  finishCommand,
  provisionWorkspace,
  type Queryable,
} from '../../../src/store/index.js';
import type { BenchContext } from '../context.js';
import { type Row, ratioRow, skippedRow } from '../harness.js';

const CASE = '18 queue-at-scale';
const NODE = 'bench-scale';
const COMMANDS_PER_RUN = 100;

/** Fills `db` with `commands` finished commands and their audit events, on the server. */
async function fill(db: Db, commands: number): Promise<void> {
  const runs = Math.max(1, Math.floor(commands / COMMANDS_PER_RUN));
  await db.execute(
    `insert into run (id, owner_user_id, status, created_at, updated_at, ended_at)
     select 'scale-run-' || g, 'bench', 'succeeded', now() - interval '10 days',
       now() - interval '4 days', now() - interval '4 days'
     from generate_series(1, $1::int) g`,
    [runs],
  );
  // Spread over the last ten days: all within the default retention.
  await db.execute(
    `insert into workspace_command (id, run_id, owner_user_id, request, timeout_ms, status,
       attempts, exit_code, stdout, stderr, exec_duration_ms, queued_at, queue_place,
       started_at, finished_at)
     select 'scale-cmd-' || g, 'scale-run-' || (g % $2::int + 1), 'bench',
       '{"command": "node -v", "timeoutMs": 10000}'::jsonb, 10000, 'completed', 1, 0,
       convert_to('v20.20.2' || chr(10), 'UTF8'), ''::bytea, 380, t, t,
       t + interval '5 milliseconds', t + interval '400 milliseconds'
     from (select g, now() - interval '10 days' + g * ($3::float8 * interval '1 millisecond') as t
           from generate_series(1, $1::int) g) s`,
    [commands, runs, (6 * 86_400_000) / commands],
  );
  await db.execute(
    `insert into audit_event (event_type, run_id, command_id, owner_user_id, metadata, created_at)
     select e.event_type, c.run_id, c.id, 'bench',
       jsonb_build_object('attempts', 1, 'timeoutMs', 10000, 'exitCode', 0), c.queued_at + e.after
     from workspace_command c
     cross join (values ('workspace_command.queued', interval '0'),
                        ('workspace_command.running', interval '5 milliseconds'),
                        ('workspace_command.completed', interval '400 milliseconds'))
       as e(event_type, after)
     order by c.queued_at, e.after`,
  );
  await db.script('vacuum analyze');
}

/** A handle that keeps the last statement it ran, to be explained. */
function recording(db: Db): { q: Queryable; last: () => { sql: string; params: unknown[] } } {
  let last = { sql: '', params: [] as unknown[] };
  return {
    q: {
      query: (sql, params) => {
        last = { sql, params: [...(params ?? [])] };
        return db.query(sql, params);
      },
      execute: (sql, params) => {
        last = { sql, params: [...(params ?? [])] };
        return db.execute(sql, params);
      },
      script: (sql) => db.script(sql),
    },
    last: () => last,
  };
}

/** The plan of a statement, one line per node. */
async function plan(db: Db, stmt: { sql: string; params: unknown[] }): Promise<string> {
  const rows = await db.query<{ 'QUERY PLAN': string }>(`explain ${stmt.sql}`, stmt.params);
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

/** Which indexes a plan walks on `table`, and whether it reads the table whole. */
function planSummary(text: string, table: string): string {
  const indexes = [...text.matchAll(/Index(?: Only)? Scan(?: Backward)? using (\w+) on (\w+)/g)]
    .filter((m) => m[2] === table)
    .map((m) => m[1]);
  const seq = new RegExp(`Seq Scan on ${table}\\b`).test(text);
  return `${[...new Set(indexes)].join(', ') || 'no index'}${seq ? ', SEQ SCAN' : ''}`;
}

export async function queueAtScale(ctx: BenchContext): Promise<Row[]> {
  if (ctx.database.kind !== 'postgres') {
    return [
      skippedRow(
        CASE,
        'it fills a database with a million rows on a Postgres server: set MEMQL_DATABASE_URL (embedded PGlite would take the case its whole time to fill)',
      ),
    ];
  }
  const commands = ctx.pick(100_000, 1_000_000);
  const big = (await ctx.openDb()).db;
  const empty = (await ctx.openDb()).db;
  const fillStart = performance.now();
  await fill(big, commands);
  const fillMs = performance.now() - fillStart;
  await empty.script('vacuum analyze');

  const sides = [
    {
      name: 'big',
      db: big,
      runId: 'bench-scale-run',
      times: { enqueue: [], claim: [], finish: [] },
    },
    {
      name: 'empty',
      db: empty,
      runId: 'bench-scale-run',
      times: { enqueue: [], claim: [], finish: [] },
    },
  ] as {
    name: string;
    db: Db;
    runId: string;
    times: Record<'enqueue' | 'claim' | 'finish', number[]>;
  }[];
  for (const side of sides) {
    await side.db.execute(`insert into run (id, owner_user_id) values ($1, 'bench')`, [side.runId]);
    await provisionWorkspace(side.db, { runId: side.runId, nodeId: NODE, ownerUserId: 'bench' });
  }
  const affinity = { nodeId: NODE, livenessMs: 10_000 };
  const one = async (side: (typeof sides)[number], keep: boolean) => {
    const t0 = performance.now();
    const { command } = await enqueueCommand(side.db, {
      id: randomUUID(),
      runId: side.runId,
      ownerUserId: 'bench',
      request: { command: 'node -v' },
      timeoutMs: 10_000,
    });
    const t1 = performance.now();
    const [claimed] = await claimCommands(side.db, `${NODE}/w`, 30_000, 1, affinity);
    const t2 = performance.now();
    if (claimed?.id !== command.id) throw new Error('the claim took another command');
    await finishCommand(side.db, command.id, `${NODE}/w`, {
      status: 'completed',
      exitCode: 0,
      stdout: Buffer.from('v20.20.2\n'),
      execDurationMs: 380,
    });
    const t3 = performance.now();
    if (!keep) return;
    side.times.enqueue.push(t1 - t0);
    side.times.claim.push(t2 - t1);
    side.times.finish.push(t3 - t2);
  };
  const samples = ctx.pick(200, 600);
  for (let i = 0; i < 20; i++) for (const side of sides) await one(side, false);
  for (let i = 0; i < samples; i++) {
    const order = i % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) await one(side, true);
  }

  // The claim and the retention deletes, as explained on the big database.
  const rec = recording(big);
  await claimCommands(rec.q, `${NODE}/w`, 30_000, 4, affinity);
  const claimPlan = planSummary(await plan(big, rec.last()), 'workspace_command');
  await deleteExpiredCommands(rec.q, 30 * 86_400_000, 1_000);
  const commandSweep = planSummary(await plan(big, rec.last()), 'workspace_command');
  await deleteExpiredAuditEvents(rec.q, 90 * 86_400_000, 1_000);
  const auditSweep = planSummary(await plan(big, rec.last()), 'audit_event');

  const note = `${commands.toLocaleString('en')} finished commands in ${(commands / COMMANDS_PER_RUN).toLocaleString('en')} runs and ${(3 * commands).toLocaleString('en')} audit events (filled on the server in ${(fillMs / 1000).toFixed(0)} s, then vacuum analyze) against an empty database on the same server; ${samples} commands per side, one at a time, sides alternating; plans on the big database: claim ${claimPlan}; command retention delete ${commandSweep}; audit retention delete ${auditSweep}`;
  const row = (op: 'enqueue' | 'claim' | 'finish', subject: string) =>
    ratioRow(
      {
        case: CASE,
        subject: `${subject}, ${commands >= 1_000_000 ? `${commands / 1_000_000}M` : `${commands / 1_000}k`}-row database`,
        baseline: `${subject}, empty database`,
        unit: 'ms',
        target: 'p50 ratio <= 1.1',
        ...(op === 'enqueue' ? { note } : {}),
      },
      sides[0]!.times[op],
      sides[1]!.times[op],
      (r) => r <= 1.1,
    );
  return [
    row('enqueue', 'enqueueCommand (its event in the statement)'),
    row('claim', 'claimCommands of 1, with affinity'),
    row('finish', 'finishCommand (its event in the statement)'),
  ];
}
