/**
 * A local node (`dist/nodes/local/main.js`, as `npm start` runs it: agent and workbench
 * in one process, the bwrap runner) in a child process, for cases measured through the
 * HTTP API. Its data directory is the case's; its database the case's (a scratch
 * Postgres database when the bench has one, else embedded PGlite in the data
 * directory). It logs warnings only, so the bench process reads no line per command.
 *
 * @module
 */

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import type { Db } from '../../src/store/index.js';
import { localBanner } from '../support/local-node.js';
import { nodeMain } from '../support/node-process.js';
import type { BenchContext } from './context.js';

/** A local node serving its API. */
export interface LocalNode {
  /** The API's address, without `/v1`. */
  readonly baseUrl: string;
  /** The agent token `npm start` prints. */
  readonly token: string;
  /** The node's database, for reading its command rows; null on PGlite (the node's own). */
  readonly db: Db | null;
}

/**
 * Starts a local node and waits for its "ready."; stopped (SIGINT) when the case ends.
 * `env` adds settings of the node's own.
 */
export async function startLocalNode(
  ctx: BenchContext,
  env: Record<string, string> = {},
): Promise<LocalNode> {
  const dataDir = await ctx.dir('local-node');
  // A scratch database on the bench's server; with none, PGlite in the node's data directory.
  const opened = ctx.database.kind === 'postgres' ? await ctx.openDb() : null;
  const url = opened?.url ?? null;
  const child = spawn(process.execPath, [nodeMain('local')], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      MEMQL_DATA_DIR: join(dataDir, '.data'),
      MEMQL_HTTP_LISTEN: '127.0.0.1:0',
      MEMQL_RUNNER: 'bwrap',
      MEMQL_LOG_LEVEL: 'warn',
      ...(url ? { MEMQL_DATABASE_URL: url } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit');
  ctx.defer(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  });
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    if (stderr.length < 4000) stderr += c.toString();
  });
  const banner = await new Promise<string>((done, fail) => {
    const onData = (c: Buffer) => {
      stdout += c.toString();
      if (!stdout.includes('ready.')) return;
      child.off('exit', onExit);
      // Past the banner only warnings come: read and dropped, so the pipe never fills.
      child.stdout?.off('data', onData);
      child.stdout?.resume();
      done(stdout);
    };
    const onExit = (code: number | null) => {
      child.stdout?.off('data', onData);
      fail(new Error(`the local node exited ${code} before "ready.": ${stderr}`));
    };
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
  });
  const { baseUrl, token } = localBanner(banner);
  return { baseUrl, token, db: opened?.db ?? null };
}
