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
 * - RSS: the worker's `VmRSS` (`/proc/<pid>/status`) at that moment; the median.
 *
 * Each worker is killed once measured. Prints one JSON object.
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
import { FORBIDDEN_IN_WORKER, forbiddenImports } from '../support/forbidden-packages.js';
import { importClosure } from '../support/import-closure.js';

const DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const WORKER_MAIN = join(DIST, 'nodes/worker/main.js');

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The closure of the compiled worker binary. */
function closure() {
  const found = importClosure(WORKER_MAIN, '.js');
  const packages = [...new Set(found.packages.map((p) => p.pkg))].sort();
  return {
    modules: found.modules.length,
    packages: packages.filter((p) => !p.startsWith('node:')),
    forbidden: [...new Set(forbiddenImports(found.packages).map((p) => p.pkg))].sort(),
    forbiddenList: FORBIDDEN_IN_WORKER.map(String),
  };
}

async function vmRssKb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const line = status.split('\n').find((l) => l.startsWith('VmRSS:'));
  if (line === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Number(line.replace(/\D+/g, ''));
}

/** One start: spawn to first connection, and the RSS then. */
async function oneStart(base: string, run: number): Promise<{ startMs: number; rssKb: number }> {
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
  const child = spawn(process.execPath, [WORKER_MAIN], {
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
  const rssKb = await vmRssKb(child.pid!);
  child.kill('SIGKILL');
  await exited;
  for (const s of sockets) s.destroy();
  server.close();
  return { startMs, rssKb };
}

async function main(): Promise<void> {
  const runsArg = process.argv.find((a) => a.startsWith('--runs='));
  const runs = runsArg === undefined ? 10 : Number(runsArg.slice('--runs='.length));
  const base = await mkdtemp(join(tmpdir(), 'memql-worker-start-'));
  try {
    const starts: { startMs: number; rssKb: number }[] = [];
    for (let i = 0; i < runs; i += 1) starts.push(await oneStart(base, i));
    const result = {
      entry: relative(process.cwd(), WORKER_MAIN),
      closure: closure(),
      runs,
      startMs: {
        median: Math.round(median(starts.map((s) => s.startMs))),
        min: Math.round(Math.min(...starts.map((s) => s.startMs))),
        max: Math.round(Math.max(...starts.map((s) => s.startMs))),
      },
      rssMb: {
        median: Math.round(median(starts.map((s) => s.rssKb)) / 102.4) / 10,
        min: Math.round(Math.min(...starts.map((s) => s.rssKb)) / 102.4) / 10,
        max: Math.round(Math.max(...starts.map((s) => s.rssKb)) / 102.4) / 10,
      },
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await rm(base, { recursive: true, force: true });
  }
}

await main();
