/**
 * Workbench hosts on the real bwrap runner, as tests of one host's behaviour (and the
 * API tests over one) build them: the filesystem object store, files owned by the
 * sandbox uid when the tests run as root, the tests' limits.
 *
 * @module
 */

import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { Test } from 'tap';
import { type DispatchResult, userAuthority } from '../../src/contract/index.js';
import { FsObjectStore, type ObjectStore } from '../../src/objects/index.js';
import { BwrapRunner } from '../../src/sandbox/bwrap/index.js';
import { SANDBOX_UID } from '../../src/sandbox/runner.js';
import { createRun, type Db, openDb } from '../../src/store/index.js';
import { createCommandChecker } from '../../src/workbench/allowlist/index.js';
import { WorkbenchHost, type WorkbenchHostDeps } from '../../src/workbench/host.js';
import { parsedEnvelope } from './envelope.js';
import { createTestDatabase } from './postgres.js';

/** Where a host keeps its files, and what it is called. */
export interface BwrapHostPlace {
  db: Db;
  nodeId: string;
  /** `$MEMQL_WORKBENCH_ROOT`. */
  workbenchRoot: string;
  objects: ObjectStore;
}

/** What a test may set beyond the defaults of {@link bwrapHostDeps}. */
export type BwrapHostOverrides = Partial<Omit<WorkbenchHostDeps, 'exec'>> & {
  limits?: Partial<WorkbenchHostDeps['exec']['limits']>;
  /** Sandboxes in the runner's warm pool (`MEMQL_SANDBOX_WARM_POOL`); default none. */
  warmPool?: number;
};

/** The deps of a host on the real bwrap runner (probed first: an unusable one throws). */
export async function bwrapHostDeps(
  place: BwrapHostPlace,
  overrides: BwrapHostOverrides = {},
): Promise<WorkbenchHostDeps> {
  const { limits: given, warmPool, ...rest } = overrides;
  const limits = {
    defaultTimeoutMs: 120_000,
    maxTimeoutMs: 300_000,
    outputLimitBytes: 1 << 20,
    memoryLimitBytes: 256 << 20,
    pidsLimit: 64,
    ...given,
  };
  const runner = new BwrapRunner(
    warmPool
      ? {
          warmPool: {
            size: warmPool,
            dir: place.workbenchRoot,
            memoryLimitBytes: limits.memoryLimitBytes,
            pidsLimit: limits.pidsLimit,
          },
        }
      : {},
  );
  const probe = await runner.probe();
  if (!probe.ok) throw new Error(`bwrap runner unusable: ${probe.reason}`);
  return {
    ...place,
    ...(process.getuid?.() === 0 ? { fileOwner: { uid: SANDBOX_UID, gid: SANDBOX_UID } } : {}),
    files: { maxReadBytes: 1 << 20, maxWriteBytes: 4 << 20 },
    queue: { concurrency: 2, leaseMs: 30_000, pollIntervalMs: 200 },
    idleTtlMs: 600_000,
    cleanupIntervalMs: 3_600_000,
    exec: {
      checker: await createCommandChecker(),
      runner: { runner, warnings: [] },
      limits,
    },
    fetch: { maxBytes: 1 << 20, timeoutMs: 5_000, allowPrivate: [] },
    log: pino({ level: 'silent' }),
    ...rest,
  };
}

/** Options of {@link bwrapHost}. */
export interface BwrapHostOptions extends BwrapHostOverrides {
  nodeId: string;
  /** The run made for the test, owned by `alice`. */
  runId: string;
  /** Wraps the database the host is given (the test keeps the real one). */
  wrapDb?: (db: Db) => Db;
}

/** What {@link bwrapHost} made. */
export interface BwrapHost {
  host: WorkbenchHost;
  /** The real database, unwrapped. */
  db: Db;
  /** The run's workspace directory. */
  dir: string;
  /** The host's runner. */
  runner: BwrapRunner;
  /** Dispatches `action` on the run as alice. */
  call(action: string, args: Record<string, unknown>): Promise<DispatchResult>;
}

/**
 * Starts a host on bwrap over a fresh database, with a run of its own; everything is
 * torn down with `t`.
 */
export async function bwrapHost(t: Test, opts: BwrapHostOptions): Promise<BwrapHost> {
  const { nodeId, runId, wrapDb, ...overrides } = opts;
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const db = await openDb({ kind: 'postgres', url: database.url });
  t.teardown(() => db.close());
  const base = await mkdtemp(join(tmpdir(), `memql-${nodeId}-`));
  await chmod(base, 0o755);
  t.teardown(() => rm(base, { recursive: true, force: true }));
  const workbenchRoot = join(base, 'workbenches');
  const objects = new FsObjectStore({ baseDir: join(base, 'objects') });
  const deps = await bwrapHostDeps(
    { db: wrapDb ? wrapDb(db) : db, nodeId, workbenchRoot, objects },
    overrides,
  );
  const host = new WorkbenchHost(deps);
  const selection = deps.exec.runner;
  const runner = 'runner' in selection ? (selection.runner as BwrapRunner) : null;
  if (runner === null) throw new Error('no runner');
  host.start();
  t.teardown(() => host.stop());
  await createRun(db, { id: runId, ownerUserId: 'alice' });
  let n = 0;
  const call = (action: string, args: Record<string, unknown>): Promise<DispatchResult> => {
    n += 1;
    return host.handleDispatch(
      parsedEnvelope({ action, args, runId, agentId: 'a', taskId: `t${n}` }),
      userAuthority('user:alice'),
    );
  };
  return { host, db, dir: join(workbenchRoot, runId), runner, call };
}
