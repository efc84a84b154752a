/**
 * The mesh shape for cases 2, 3 and 8: a workbench node binary
 * (`dist/nodes/workbench/main.js`) in its own process, and an agent node
 * (`startAgentNode`, as `nodes/agent/main.ts` wires it) in the bench process,
 * routing to it over `NodeService.Stream` on 127.0.0.1.
 *
 * The workbench node's log goes to a file in its data directory, as a log collector
 * would take it, not into a pipe the bench process drains: draining it here woke the
 * process that also runs the agent and times the call three times per command (one
 * line per queue move), which added about 0.4 ms p50 to case 2 that a deployed agent
 * node, which never reads a replica's log, does not pay.
 *
 * @module
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAgentNode } from '../../src/agent/agent-node.js';
import type { AgentDispatcher } from '../../src/agent/dispatcher.js';
import { loadConfig } from '../../src/config/index.js';
import type { BenchContext } from './context.js';

/** `dist/nodes/workbench/main.js`, from this compiled file (`dist/test/bench/`). */
const WORKBENCH_MAIN = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'nodes',
  'workbench',
  'main.js',
);

const TOKEN = 'bench-mesh-token-0123456789abcdef';

/** A workbench node process. */
export interface WorkbenchProcess {
  child: ChildProcess;
  pid: number;
  port: number;
  dataDir: string;
  /** Its log, one JSON line a record. */
  logFile: string;
}

/**
 * Starts a workbench node on the given database (`url`, or PGlite in its data
 * directory seeded with `runIds` when `url` is null) and waits until it serves.
 */
export async function startWorkbenchProcess(
  ctx: BenchContext,
  url: string | null,
  runIds: readonly string[],
  env: Record<string, string> = {},
): Promise<WorkbenchProcess> {
  const dataDir = await ctx.dir('wb-node');
  if (url === null) await ctx.seedPglite(dataDir, runIds);
  const logFile = `${dataDir}/node.log`;
  const logFd = openSync(logFile, 'w');
  const child = spawn(process.execPath, [WORKBENCH_MAIN, '--shutdown-grace-ms=2000'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      MEMQL_NODE_ID: ctx.unique('wb'),
      MEMQL_DATA_DIR: dataDir,
      MEMQL_WORKBENCH_ROOT: `${dataDir}/workbenches`,
      MEMQL_GRPC_LISTEN: '127.0.0.1:0',
      MEMQL_MESH_TOKEN: TOKEN,
      MEMQL_RUNNER: 'bwrap',
      MEMQL_LOG_LEVEL: 'info',
      ...(url ? { MEMQL_DATABASE_URL: url } : {}),
      ...env,
    },
    stdio: ['ignore', logFd, 'pipe'],
  });
  closeSync(logFd);
  const exited = once(child, 'exit');
  ctx.defer(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 8_000);
    await exited;
    clearTimeout(timer);
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    if (stderr.length < 4000) stderr += c.toString();
  });
  const port = await new Promise<number>((done, fail) => {
    const deadline = Date.now() + 30_000;
    const exit = (code: number | null) => {
      clearInterval(poll);
      fail(new Error(`workbench node exited ${code}: ${stderr}`));
    };
    child.once('exit', exit);
    const poll = setInterval(() => {
      const ready = readFileSync(logFile, 'utf8')
        .split('\n')
        .find((line) => line.includes('workbench node ready'));
      if (ready === undefined && Date.now() < deadline) return;
      clearInterval(poll);
      child.off('exit', exit);
      if (ready === undefined) fail(new Error(`workbench node not ready: ${stderr}`));
      else done(Number((JSON.parse(ready) as { grpcPort: number }).grpcPort));
    }, 20);
  });
  return { child, pid: child.pid ?? 0, port, dataDir, logFile };
}

/** An agent node in this process routing to `wb`; resolves once the peer is healthy. */
export async function startAgent(
  ctx: BenchContext,
  wb: WorkbenchProcess,
): Promise<AgentDispatcher> {
  const config = loadConfig(
    {
      MEMQL_NODE_ID: ctx.unique('agent'),
      MEMQL_DATA_DIR: await ctx.dir('agent'),
      MEMQL_GRPC_LISTEN: '127.0.0.1:0',
      MEMQL_MESH_TOKEN: TOKEN,
      MEMQL_WORKBENCH_REMOTE: '1',
      MEMQL_WORKER_PEERS: `workbench=bench-workbench:${wb.port}`,
      MEMQL_LOG_LEVEL: 'silent',
    },
    { cwd: process.cwd() },
  );
  const node = await startAgentNode({
    config,
    log: ctx.log,
    local: null,
    // The workbench's database may be PGlite inside its process: no affinity read.
    readAffinity: async () => null,
    version: 'bench',
    resolver: async (seed) => [{ host: '127.0.0.1', port: wb.port, serverName: seed.host }],
  });
  ctx.defer(() => node.close());
  const deadline = Date.now() + 15_000;
  while (!(node.registry?.views() ?? []).some((p) => p.healthy)) {
    if (Date.now() > deadline) throw new Error('the workbench peer never became healthy');
    await new Promise((r) => setTimeout(r, 50));
  }
  return node.dispatcher;
}
