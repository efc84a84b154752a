import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CommandQueue,
  type CommandQueueOptions,
  type ExecuteCommand,
  type ExecutionResult,
} from '../../src/queue/index.js';
import type { Runner } from '../../src/sandbox/runner.js';
import {
  createRun,
  type Db,
  listAuditEvents,
  openDb,
  type Queryable,
} from '../../src/store/index.js';
import { createLogger, type Logger } from '../../src/telemetry/logger.js';
import { createTestDatabase } from '../support/postgres.js';

/** The subset of a tap test these helpers use. */
interface Teardown {
  teardown(fn: () => unknown): void;
}

/** A fresh database for one test file, dropped at teardown. */
export async function setupDb(t: Teardown): Promise<{ db: Db; url: string }> {
  const tdb = await createTestDatabase();
  const db = await openDb({ kind: 'postgres', url: tdb.url, maxConnections: 20 });
  t.teardown(async () => {
    await db.close();
    await tdb.drop();
  });
  return { db, url: tdb.url };
}

/** Creates a run to hang commands on. */
export async function newRun(db: Db): Promise<{ runId: string; ownerUserId: string }> {
  const runId = `run-${randomBytes(6).toString('hex')}`;
  await createRun(db, { id: runId, ownerUserId: 'user-1', conversationId: `conv-${runId}` });
  return { runId, ownerUserId: 'user-1' };
}

/** A temporary directory, removed at teardown. */
export async function tempDir(t: Teardown): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'memql-queue-test-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A logger whose lines are kept in memory. */
export interface CapturedLog {
  log: Logger;
  /** Everything written so far. */
  text(): string;
  /** The lines written so far, parsed. */
  lines(): Record<string, unknown>[];
}

/** A real pino logger writing into memory. */
export function captureLog(nodeId = 'node-test'): CapturedLog {
  const out = new PassThrough();
  const chunks: string[] = [];
  out.on('data', (c: Buffer) => chunks.push(c.toString('utf8')));
  const log = createLogger({ nodeId, nodeType: 'workbench', destination: out, level: 'debug' });
  const text = () => chunks.join('');
  return {
    log,
    text,
    lines: () =>
      text()
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

/** The request shape the test executors understand. */
export interface TestRequest {
  command: string;
  env?: Record<string, string>;
  stdin?: string;
}

/** What an executor returns for a command that ended at once: exit 0, no output. */
export function emptyRun(): ExecutionResult {
  return {
    exitCode: 0,
    signal: null,
    timedOut: false,
    cancelled: false,
    oomKilled: false,
    stdout: new Uint8Array(0),
    stderr: new Uint8Array(0),
    stdoutTruncated: false,
    stderrTruncated: false,
    durationMs: 0,
  };
}

/** An executor that runs `request.command` through a real runner in `workspaceDir`. */
export function runnerExecutor(runner: Runner, workspaceDir: string): ExecuteCommand {
  return (command, ctx) => {
    const req = command.request as unknown as TestRequest;
    return runner.run({
      workspaceDir,
      command: req.command,
      ...(req.env ? { env: req.env } : {}),
      ...(req.stdin !== undefined ? { stdin: req.stdin } : {}),
      timeoutMs: command.timeoutMs,
      outputLimitBytes: 64 * 1024,
      signal: ctx.signal,
      onOutput: ctx.onOutput,
    });
  };
}

/** Builds a queue that is stopped (grace 0) at teardown. Not started. */
export function makeQueue(
  t: Teardown,
  options: Partial<CommandQueueOptions> & Pick<CommandQueueOptions, 'db' | 'execute'>,
): CommandQueue {
  const queue = new CommandQueue({
    nodeId: 'node-a',
    concurrency: 2,
    leaseMs: 5000,
    pollIntervalMs: 100,
    // Short, so a gone worker counts as gone soon.
    livenessMs: 1000,
    log: createLogger({
      nodeId: options.nodeId ?? 'node-a',
      nodeType: 'workbench',
      level: 'silent',
    }),
    ...options,
  });
  t.teardown(() => queue.stop({ graceMs: 0 }));
  return queue;
}

/** The event types written for a command, in order. */
export async function eventTypes(db: Db, commandId: string): Promise<string[]> {
  return (await listAuditEvents(db, { commandId })).map((e) => e.eventType);
}

/** Polls `check` until it returns a value other than undefined, or fails after `ms`. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  ms = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/**
 * Wraps `db` so that `seen(sql)` is called each time a statement completes, inside
 * transactions too, and once a `listen` listens: a test can tell when a worker has run
 * a given statement (its claim, say) instead of guessing how long that takes.
 */
export function watchedDb(db: Db, seen: (sql: string) => void): Db {
  const after = async <T>(sql: string, run: () => Promise<T>): Promise<T> => {
    const result = await run();
    seen(sql);
    return result;
  };
  const wrap = (q: Queryable): Queryable => ({
    query: (text, params) => after(text, () => q.query(text, params)),
    execute: (text, params) => after(text, () => q.execute(text, params)),
    script: (text) => after(text, () => q.script(text)),
  });
  return {
    kind: db.kind,
    ...wrap(db),
    transaction: (fn) => db.transaction((tx) => fn(wrap(tx))),
    // A listen is seen once it listens (`listen <channel>`).
    ...(db.listen
      ? {
          listen: (channel, onNotify, onListening) =>
            after(`listen ${channel}`, () => db.listen!(channel, onNotify, onListening)),
        }
      : {}),
    close: () => db.close(),
  };
}

/** Whether `sql` is the worker's claim of queued commands (`claimCommands`). */
export function isClaim(sql: string): boolean {
  return /set status = 'running'/.test(sql);
}
