/**
 * How heavy the worker host binary is: its import closure and its start.
 *
 *   npm run build --silent && node dist/test/bench/worker-start.js [--runs=10]
 *
 * - closure: the modules of this repository that `dist/nodes/worker/main.js` reaches
 *   (the walker of `test/support/import-closure.ts` on the compiled files), the
 *   packages they import, and which of those the worker must not reach (the list of
 *   `test/architecture/worker-closure.test.ts`);
 * - start: from the spawn of the worker to its first connection to its agent, here a
 *   plain TCP listener of this script's (the worker has loaded its modules, read its
 *   configuration and its root, built its handler and dialled); the median of the runs;
 * - CPU: the worker's user and system time (`/proc/<pid>/stat`, 10 ms ticks) at that
 *   moment; the median. On a busy machine the wall time stretches, the CPU time less;
 * - RSS: the worker's `VmRSS` (`/proc/<pid>/status`) at that moment; the median.
 *
 * Each worker is killed once measured. Prints one JSON object.
 *
 * `--worker=<main.js>` (repeatable) measures other builds of the binary instead, a
 * round of starts visiting each in turn, so that a busy machine weighs on all alike:
 *
 *   node dist/test/bench/worker-start.js --worker=dist/nodes/worker/main.js \
 *     --worker=/tmp/base/dist/nodes/worker/main.js
 *
 * @module
 */

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { forbiddenImports } from '../support/forbidden-packages.js';
import { importClosure } from '../support/import-closure.js';

const DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const WORKER_MAIN = join(DIST, 'nodes/worker/main.js');

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The closure of a compiled worker binary. */
function closure(main: string) {
  const found = importClosure(main, '.js');
  const packages = [...new Set(found.packages.map((p) => p.pkg))].sort();
  return {
    modules: found.modules.length,
    packages: packages.filter((p) => !p.startsWith('node:')),
    forbidden: [...new Set(forbiddenImports(found.packages).map((p) => p.pkg))].sort(),
  };
}

async function vmRssKb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const line = status.split('\n').find((l) => l.startsWith('VmRSS:'));
  if (line === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Number(line.replace(/\D+/g, ''));
}

/** The CPU time a process has used, user and system, ms (`/proc/<pid>/stat`). */
async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command name (which may hold spaces), from field 3 on.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks * 10;
}

/** What one start measured. */
interface Start {
  readonly startMs: number;
  readonly cpuMs: number;
  readonly rssKb: number;
}

/** One start: spawn to first connection, and the CPU time and RSS then. */
async function oneStart(main: string, base: string, run: number): Promise<Start> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  const connected = once(server, 'connection');
  const root = join(base, 'root');
  await import('node:fs/promises').then((fs) => fs.mkdir(root, { recursive: true }));
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [main], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      PATH: process.env.PATH,
      HOME: base,
      MEMQL_NODE_ID: `bench-worker-${run}`,
      MEMQL_DATA_DIR: join(base, 'data'),
      MEMQL_WORKER_AGENT: `127.0.0.1:${port}`,
      MEMQL_WORKER_TOKEN: 'mqt_bench-worker-start',
      MEMQL_WORKER_ROOT: root,
      MEMQL_WORKER_PROVIDES: 'user_files',
      MEMQL_LOG_FORMAT: 'json',
    },
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const exited = once(child, 'exit');
  const first = await Promise.race([
    connected.then(() => 'connected' as const),
    exited.then(() => 'exited' as const),
  ]);
  const startMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (first === 'exited') throw new Error(`the worker exited before it dialled: ${stderr}`);
  const [cpu, rssKb] = await Promise.all([cpuMs(child.pid!), vmRssKb(child.pid!)]);
  child.kill('SIGKILL');
  await exited;
  for (const s of sockets) s.destroy();
  server.close();
  return { startMs, cpuMs: cpu, rssKb };
}

/** The medians (and spread) of a list of starts. */
function summary(starts: readonly Start[]) {
  const ms = starts.map((s) => s.startMs);
  const cpu = starts.map((s) => s.cpuMs);
  const mb = starts.map((s) => s.rssKb / 1024);
  const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;
  return {
    startMs: {
      median: round(median(ms), 0),
      min: round(Math.min(...ms), 0),
      max: round(Math.max(...ms), 0),
    },
    cpuMs: {
      median: round(median(cpu), 0),
      min: round(Math.min(...cpu), 0),
      max: round(Math.max(...cpu), 0),
    },
    rssMb: {
      median: round(median(mb), 1),
      min: round(Math.min(...mb), 1),
      max: round(Math.max(...mb), 1),
    },
  };
}

async function main(): Promise<void> {
  const arg = (name: string) =>
    process.argv.filter((a) => a.startsWith(`--${name}=`)).map((a) => a.slice(name.length + 3));
  const runs = Number(arg('runs')[0] ?? 10);
  const mains = arg('worker').map((m) => resolve(m));
  if (mains.length === 0) mains.push(WORKER_MAIN);
  const base = await mkdtemp(join(tmpdir(), 'memql-worker-start-'));
  try {
    const starts = mains.map(() => [] as Start[]);
    for (let i = 0; i < runs; i += 1) {
      for (const [k, main] of mains.entries()) starts[k]!.push(await oneStart(main, base, i));
    }
    const result = mains.map((main, k) => ({
      entry: main.startsWith(process.cwd()) ? relative(process.cwd(), main) : main,
      closure: closure(main),
      runs,
      ...summary(starts[k]!),
    }));
    process.stdout.write(`${JSON.stringify(result.length === 1 ? result[0] : result, null, 2)}\n`);
  } finally {
    await rm(base, { recursive: true, force: true });
  }
}

await main();
