/**
 * `npm run soak`: the durability soak. One agent and two workbench processes on the
 * test Postgres and a real object store; a burst of mixed calls to one run while the
 * replica holding it is drained (SIGTERM) and killed (SIGKILL) mid-command, again and
 * again, each time started back up. Then every write and every command that was
 * acknowledged is checked, and the run's commands are checked to have all ended.
 *
 *   npm run soak -- --calls=1000 --drains=20 --kills=20 --store=fs|s3
 *
 * Two more soaks start from here: `npm run soak -- --mode=recovery ...` (replica
 * kills and how long their commands take to end, `recovery.ts`) and
 * `npm run soak -- --mode=pauses ...` (Postgres pauses under commands, `pauses.ts`), and
 * `npm run soak -- --mode=growth ...` (a node's cost under an hour of mixed load,
 * `growth.ts`).
 *
 * Prints a JSON summary; exits 1 when anything acknowledged was lost or a command
 * was left neither completed nor ended.
 *
 * @module
 */

import { DurableMesh } from '../support/durable-mesh.js';
import type { HarnessOutcome } from '../support/mesh-harness.js';
import { teardowns } from './soak-support.js';

interface Args {
  calls: number;
  drains: number;
  kills: number;
  store: 'fs' | 's3';
  concurrency: number;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { calls: 1000, drains: 20, kills: 20, store: 'fs', concurrency: 16 };
  for (const arg of argv) {
    const [key, value] = arg.replace(/^--/, '').split('=');
    if (key === 'store' && (value === 'fs' || value === 's3')) args.store = value;
    else if (key && key in args && Number.isSafeInteger(Number(value))) {
      (args as unknown as Record<string, number>)[key] = Number(value);
    } else throw new Error(`unknown argument ${arg}`);
  }
  return args;
}

const RUN = 'run-soak';
/** The action of call `i`, by `i % 10` (a read falls back to a list until a write is acknowledged). */
const ACTIONS = [
  'write',
  'write',
  'write',
  'write',
  'exec',
  'exec',
  'exec',
  'read',
  'read',
  'list',
];

async function main(argv: readonly string[]): Promise<void> {
  const args = parseArgs(argv);
  const cleanup = teardowns();
  const began = Date.now();
  const mesh = await DurableMesh.start(cleanup.t, {
    store: args.store,
    env: { MEMQL_NODE_LIVENESS_MS: '3000' },
    args: ['--shutdown-grace-ms=2000'],
  });
  try {
    await mesh.run(RUN, 'wb-a');
    const expected = new Map<string, string>();
    const outcomes: Record<string, number> = {};
    const reasons: Record<string, number> = {};
    const note = (key: string) => {
      outcomes[key] = (outcomes[key] ?? 0) + 1;
    };
    let issued = 0;
    let chaosDone = false;

    const one = async (i: number) => {
      const kind = i % 10;
      let r: HarnessOutcome;
      try {
        if (kind < 4) {
          const path = `w/${i}.txt`;
          r = await mesh.dispatch(RUN, 'fs_write', { path, content: `write ${i}` });
          if (r.result.ok) expected.set(path, `write ${i}`);
        } else if (kind < 7) {
          const path = `e/${i}.txt`;
          r = await mesh.dispatch(RUN, 'exec', {
            command: `mkdir -p e; sleep 0.${(i % 5) + 1}; echo exec ${i} > ${path}`,
          });
          const exit = r.result.ok ? (r.result.payload as { exitCode: number }).exitCode : null;
          if (r.result.ok && exit === 0) expected.set(path, `exec ${i}\n`);
        } else if (kind < 9 && expected.size > 0) {
          // Only acknowledged paths: a read that misses one is a loss seen live.
          const known = [...expected.keys()];
          const path = known[i % known.length]!;
          r = await mesh.dispatch(RUN, 'fs_read', { path });
        } else {
          r = await mesh.dispatch(RUN, 'fs_list', { path: '.', recursive: true });
        }
        const action = ACTIONS[kind] ?? 'list';
        note(`${action}:${r.result.ok ? 'ok' : r.result.errorCode}`);
        if (!r.result.ok) {
          // The message without ids and numbers, to group refusals by kind.
          const why = r.result.message.replace(/[0-9a-f-]{36}|"[^"]*"|\d+/g, '#').slice(0, 100);
          reasons[`${action}: ${why}`] = (reasons[`${action}: ${why}`] ?? 0) + 1;
        }
      } catch {
        note('no_answer');
      }
    };

    const worker = async () => {
      while (issued < args.calls || !chaosDone) {
        issued += 1;
        await one(issued);
      }
    };

    const chaos = async () => {
      const plan = [
        ...Array.from({ length: args.drains }, () => 'SIGTERM' as const),
        ...Array.from({ length: args.kills }, () => 'SIGKILL' as const),
      ].sort((a, b) => (a === b ? 0 : Math.random() - 0.5));
      let midCommand = 0;
      for (const signal of plan) {
        // Mid-command: wait (bounded) for a command of the run to be running.
        const until = Date.now() + 10_000;
        let holder: string | null = null;
        while (Date.now() < until) {
          holder = await mesh.holder(RUN);
          const running = await mesh.db.query(
            `select 1 from workspace_command where run_id = $1 and status = 'running'`,
            [RUN],
          );
          if (holder && running.length > 0) {
            midCommand += 1;
            break;
          }
          await new Promise((r) => setTimeout(r, 50));
        }
        holder ??= 'wb-a';
        const wb = mesh.replica(holder);
        if (wb.proc.alive) {
          wb.proc.child.kill(signal);
          await wb.proc.exited;
        }
        await mesh.restart(holder);
        await mesh.untilHealthy(['wb-a', 'wb-b']);
      }
      chaosDone = true;
      return midCommand;
    };

    const [midCommand] = await Promise.all([
      chaos(),
      ...Array.from({ length: args.concurrency }, worker),
    ]);

    // Every command of the run ends: recovery takes what the killed replicas left.
    const settleUntil = Date.now() + 120_000;
    let live = -1;
    while (Date.now() < settleUntil) {
      const rows = await mesh.db.query<{ n: number }>(
        `select count(*)::int as n from workspace_command
         where run_id = $1 and status in ('queued', 'running')`,
        [RUN],
      );
      live = Number(rows[0]?.n ?? 0);
      if (live === 0) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const statuses = await mesh.db.query<{ status: string; n: number }>(
      `select coalesce(error_code, status) as status, count(*)::int as n from workspace_command
       where run_id = $1 group by 1 order by 1`,
      [RUN],
    );

    const lost: string[] = [];
    for (const [path, content] of expected) {
      const r = await mesh.dispatch(RUN, 'fs_read', { path });
      const got = r.result.ok ? (r.result.payload as { content: string }).content : null;
      if (got !== content) lost.push(path);
    }
    // Takeovers by why the holder was passed over (`gone`, or `unreachable` to the agent).
    const events = await mesh.db.query<{ event_type: string; n: number }>(
      `select event_type || coalesce(' (' || (metadata->>'previousHolder') || ')', '') as event_type,
         count(*)::int as n from audit_event
       where run_id = $1 and event_type like 'workspace.%' group by 1 order by 1`,
      [RUN],
    );
    // Errors the replicas logged (level 50+): an internal failure is a defect to read.
    const errors: Record<string, number> = {};
    for (const wb of mesh.started) {
      for (const l of wb.proc.lines) {
        if (l.level < 50) continue;
        const err = (l as { err?: { message?: string } }).err?.message ?? '';
        const key = `${l.msg}: ${err}`.slice(0, 160);
        errors[key] = (errors[key] ?? 0) + 1;
      }
    }
    const summary = {
      store: args.store,
      calls: issued,
      drains: args.drains,
      kills: args.kills,
      disruptionsMidCommand: midCommand,
      acknowledgedWrites: [...expected.keys()].filter((p) => p.startsWith('w/')).length,
      acknowledgedExecFiles: [...expected.keys()].filter((p) => p.startsWith('e/')).length,
      lost: lost.length,
      lostPaths: lost.slice(0, 20),
      commandsNotTerminal: live,
      commandsByOutcome: Object.fromEntries(statuses.map((s) => [s.status, s.n])),
      outcomes,
      refusals: reasons,
      workspaceEvents: Object.fromEntries(events.map((e) => [e.event_type, e.n])),
      replicaErrors: errors,
      seconds: Math.round((Date.now() - began) / 1000),
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    process.exitCode = lost.length === 0 && live === 0 ? 0 : 1;
    await mesh.stop();
  } finally {
    for (const wb of mesh.started) if (wb.proc.alive) wb.proc.child.kill('SIGKILL');
    await cleanup.run();
  }
}

/** `--mode=recovery|pauses|growth` runs another soak with the rest of the arguments. */
async function start(argv: readonly string[]): Promise<void> {
  const mode = argv.find((a) => a.startsWith('--mode='))?.slice('--mode='.length);
  const rest = argv.filter((a) => !a.startsWith('--mode='));
  if (mode === 'recovery') return (await import('./recovery.js')).soakRecovery(rest);
  if (mode === 'pauses') return (await import('./pauses.js')).soakPauses(rest);
  if (mode === 'growth') return (await import('./growth.js')).soakGrowth(rest);
  if (mode !== undefined && mode !== 'calls') throw new Error(`unknown mode ${mode}`);
  return main(rest);
}

start(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`soak failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
