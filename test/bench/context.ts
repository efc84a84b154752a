/**
 * What the benchmark cases share: the size, the database (real Postgres when
 * `MEMQL_DATABASE_URL` is set, else embedded PGlite), a scratch directory, hosts
 * built the way the nodes build them, and teardown.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import postgres from 'postgres';
import { loadConfig } from '../../src/config/index.js';
import { type DispatchResult, userAuthority } from '../../src/contract/index.js';
import type { ObjectStore } from '../../src/objects/index.js';
import { createRun, type DatabaseTarget, type Db, openDb } from '../../src/store/index.js';
import type { Logger } from '../../src/telemetry/logger.js';
import type { WorkbenchHost } from '../../src/workbench/host.js';
import { createWorkbenchHost } from '../../src/workbench/host-factory.js';
import { parsedEnvelope } from '../support/envelope.js';
import { type S3TestServer, s3NodeEnv, startS3Server } from '../support/s3-server.js';

/** `--size=small` (development) or `default` (the numbers in docs/performance.md). */
export type BenchSize = 'small' | 'default';

/** Where rows live for this run of the harness. */
export type BenchDatabase =
  | { kind: 'postgres'; url: string; label: string }
  | { kind: 'pglite'; label: string };

/** Shared state of one `npm run bench`. */
export class BenchContext {
  private readonly cleanups: (() => Promise<unknown>)[] = [];
  /** Teardown of what the cases share (the S3 server), run by {@link close}. */
  private readonly sharedCleanups: (() => Promise<unknown>)[] = [];
  readonly log: Logger = pino({ level: 'silent' });
  private counter = 0;
  private s3Server: Promise<S3TestServer> | undefined;

  private constructor(
    readonly size: BenchSize,
    readonly database: BenchDatabase,
    readonly baseDir: string,
  ) {}

  static async create(size: BenchSize, env: NodeJS.ProcessEnv): Promise<BenchContext> {
    const baseDir = await mkdtemp(join(tmpdir(), 'memql-bench-'));
    // The sandbox uid must be able to reach workspaces under it.
    await chmod(baseDir, 0o755);
    const url = env.MEMQL_DATABASE_URL;
    const database: BenchDatabase = url
      ? { kind: 'postgres', url, label: `real Postgres (${redactUrl(url)})` }
      : { kind: 'pglite', label: 'embedded PGlite (MEMQL_DATABASE_URL unset)' };
    return new BenchContext(size, database, baseDir);
  }

  /** A value for `small`, another for `default`. */
  pick<T>(small: T, full: T): T {
    return this.size === 'small' ? small : full;
  }

  /** A unique name for runs, directories, databases. */
  unique(prefix: string): string {
    this.counter += 1;
    return `${prefix}-${this.counter}-${randomBytes(3).toString('hex')}`;
  }

  /** Registers teardown, run in reverse order when the case ends ({@link endCase}). */
  defer(fn: () => Promise<unknown>): void {
    this.cleanups.push(fn);
  }

  /**
   * Tears down, in reverse order, what the case that just ran started: its hosts,
   * node processes, clients and databases stop before the next case is timed, so no
   * case is measured beside another's background loops.
   */
  async endCase(): Promise<void> {
    await runAll(this.cleanups);
  }

  /** A fresh directory under the scratch directory, searchable by the sandbox uid. */
  async dir(name: string): Promise<string> {
    const dir = join(this.baseDir, this.unique(name));
    await mkdir(dir, { recursive: true, mode: 0o755 });
    await chmod(dir, 0o755);
    return dir;
  }

  /**
   * A fresh database for one case: a new database on the server when
   * `MEMQL_DATABASE_URL` is set (dropped at the end), else in-memory PGlite.
   * Also returns the target a node process would use (`null` for in-memory PGlite).
   */
  async openDb(): Promise<{ db: Db; url: string | null }> {
    if (this.database.kind === 'pglite') {
      const db = await openDb({ kind: 'pglite' });
      this.defer(() => db.close());
      return { db, url: null };
    }
    const url = await this.scratchDatabase(this.database.url);
    const db = await openDb({ kind: 'postgres', url });
    this.defer(() => db.close());
    return { db, url };
  }

  /** PGlite in a directory, for a node process to open after this one closes it. */
  async seedPglite(dataDir: string, runIds: readonly string[]): Promise<void> {
    const target: DatabaseTarget = { kind: 'pglite', dataDir: join(dataDir, 'pglite') };
    const db = await openDb(target);
    try {
      for (const id of runIds) await createRun(db, { id, ownerUserId: 'bench' });
    } finally {
      await db.close();
    }
  }

  private async scratchDatabase(url: string): Promise<string> {
    const name = `memql_bench_${randomBytes(5).toString('hex')}`;
    const admin = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
    await admin.unsafe(`create database ${name}`);
    this.defer(async () => {
      try {
        await admin.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await admin.end({ timeout: 1 });
      }
    });
    const u = new URL(url);
    u.pathname = `/${name}`;
    return u.toString();
  }

  /**
   * A workbench host built exactly as the nodes build it (`createWorkbenchHost` from
   * `loadConfig`), on the bwrap runner unless `env` says otherwise, and started.
   */
  async host(
    db: Db,
    env: Record<string, string> = {},
    objects?: ObjectStore,
    log: Logger = this.log,
  ): Promise<{ host: WorkbenchHost; root: string; dataDir: string }> {
    const dataDir = await this.dir('data');
    const root = join(dataDir, 'workbenches');
    const config = loadConfig(
      {
        MEMQL_NODE_ID: this.unique('bench-node'),
        MEMQL_DATA_DIR: dataDir,
        MEMQL_WORKBENCH_ROOT: root,
        MEMQL_RUNNER: 'bwrap',
        MEMQL_LOG_LEVEL: 'silent',
        ...env,
      },
      { cwd: process.cwd() },
    );
    const { host, runner } = await createWorkbenchHost(config, {
      db,
      log,
      platform: process.platform,
      runsAsRoot: process.getuid?.() === 0,
      ...(objects ? { objects } : {}),
    });
    if ('error' in runner) throw new Error(`no sandbox: ${runner.error.message}`);
    host.start();
    this.defer(() => host.stop(2_000));
    return { host, root, dataDir };
  }

  /** The S3-compatible test server (s3rver in a child process), started once. */
  s3(): Promise<S3TestServer> {
    this.s3Server ??= startS3Server({ bucket: 'memql-bench' }).then((server) => {
      this.sharedCleanups.push(() => server.stop());
      return server;
    });
    return this.s3Server;
  }

  /** The `MEMQL_S3_*` settings of the test server, for a node process. */
  async s3Env(): Promise<Record<string, string>> {
    const s3 = await this.s3();
    return { ...s3NodeEnv(s3), MEMQL_S3_PREFIX: this.unique('p') };
  }

  /** Creates runs (owner `bench`) in `db`. */
  async runs(db: Db, count: number, prefix = 'run'): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const id = this.unique(prefix);
      await createRun(db, { id, ownerUserId: 'bench' });
      ids.push(id);
    }
    return ids;
  }

  /** Runs every registered teardown, newest first; failures are reported, not thrown. */
  async close(): Promise<void> {
    await runAll(this.cleanups);
    await runAll(this.sharedCleanups);
    await rm(this.baseDir, { recursive: true, force: true });
  }
}

/** Runs and removes every teardown in `cleanups`, last registered first. */
async function runAll(cleanups: (() => Promise<unknown>)[]): Promise<void> {
  while (cleanups.length > 0) {
    const fn = cleanups.pop();
    try {
      await fn?.();
    } catch (err) {
      process.stderr.write(`bench teardown: ${(err as Error).message}\n`);
    }
  }
}

let task = 0;

/** A `workbenchHost` envelope for run `runId`. */
export function envelope(runId: string, action: string, args: Record<string, unknown>) {
  task += 1;
  return parsedEnvelope({ action, args, runId, agentId: 'bench-agent', taskId: `bench-${task}` });
}

/** The authority bench calls are made with. */
export const BENCH_AUTHORITY = userAuthority('user:bench');

/** Throws unless a dispatch succeeded (and, for exec, exited 0). */
export function expectOk(result: DispatchResult, what: string): void {
  if (!result.ok) throw new Error(`${what}: ${result.errorCode}: ${result.message}`);
  const exit = (result.payload as { exitCode?: unknown } | undefined)?.exitCode;
  if (exit !== undefined && exit !== 0) {
    throw new Error(
      `${what}: exit ${String(exit)}: ${JSON.stringify(result.payload).slice(0, 300)}`,
    );
  }
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable URL)';
  }
}
