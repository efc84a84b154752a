import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { Test } from 'tap';
import { AgentDispatcher } from '../../src/agent/index.js';
import { type ApiDeps, localFleet, startApiServer } from '../../src/api/index.js';
import type { DispatchResult } from '../../src/contract/index.js';
import { FsObjectStore, type ObjectStore } from '../../src/objects/index.js';
import { countLiveCommands, createApiToken, type Db, openDb } from '../../src/store/index.js';
import { WorkbenchHost } from '../../src/workbench/host.js';
import { bwrapHostDeps } from '../support/bwrap-host.js';
import { createTestDatabase } from '../support/postgres.js';

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field by the assertions
export type Json = any;

/** A dispatch result as the tests read it. */
export type DispatchAnswer = { ok: boolean; errorCode?: string; message?: string; payload?: Json };

/** A live API over a real workbench host: Postgres, fs objects, the bwrap sandbox. */
export interface ApiHarness {
  url: string;
  db: Db;
  objects: ObjectStore;
  host: WorkbenchHost;
  /**
   * The answers the workbench host gave, by `callId`, as it gave them: a call the API
   * has let go of (its caller went away) shows here once the host is done with it.
   */
  answered: Map<string, DispatchResult>;
  base: string;
  root: string;
  /** Agent tokens of two users (what a tool loop holds). */
  alice: string;
  bob: string;
  /** Person tokens of the same two users (what decides consent). */
  alicePerson: string;
  bobPerson: string;
  /** fetch against the API with a token. */
  call(token: string | null, path: string, init?: RequestInit): Promise<Response>;
  /** A new run of the token's user; its id. */
  newRun(token: string): Promise<string>;
  /** One `POST /v1/dispatch` as the token's user; the result (any HTTP status but 200 throws). */
  dispatch(token: string, runId: string, action: string, args: object): Promise<DispatchAnswer>;
  /** JSON request and answer. */
  json<T = Record<string, unknown>>(
    token: string | null,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }>;
}

/**
 * Starts everything on `t` and tears it all down at its end. The sandbox is real
 * bubblewrap (`scripts/setup/install-sandbox.sh`): the API is the way commands reach it.
 */
export async function startApiHarness(
  t: Test,
  options: {
    /** API dependencies beyond the harness's own (the egress bounds, a hook). */
    api?: Partial<Pick<ApiDeps, 'egress' | 'onRunNetworkChanged'>>;
    /** The object store of the API and the workbench; default a filesystem store. */
    objects?: ObjectStore;
  } = {},
): Promise<ApiHarness> {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const db = await openDb({ kind: 'postgres', url: database.url });
  t.teardown(() => db.close());
  const base = await mkdtemp(join(tmpdir(), 'memql-api-'));
  await chmod(base, 0o755);
  t.teardown(() => rm(base, { recursive: true, force: true }));
  const root = join(base, 'workbenches');
  const objects = options.objects ?? new FsObjectStore({ baseDir: join(base, 'objects') });
  const log = pino({ level: 'silent' });
  const host = new WorkbenchHost(
    await bwrapHostDeps(
      { db, nodeId: 'node-api', workbenchRoot: root, objects },
      {
        files: { maxReadBytes: 1 << 20, maxWriteBytes: 40 << 20 },
        queue: { concurrency: 4, leaseMs: 30_000, pollIntervalMs: 200 },
        limits: { defaultTimeoutMs: 30_000, maxTimeoutMs: 60_000 },
        log,
      },
    ),
  );
  host.start();
  t.teardown(() => host.stop());
  const answered = new Map<string, DispatchResult>();
  const dispatcher = new AgentDispatcher({
    remote: false,
    localFallback: false,
    local: {
      async handleDispatch(envelope, authority, options) {
        const result = await host.handleDispatch(envelope, authority, options);
        if (envelope.callId !== undefined) answered.set(envelope.callId, result);
        return result;
      },
    },
    router: null,
    readAffinity: async () => null,
    peersRaw: '',
    log,
  });
  const since = new Date();
  const api = await startApiServer(
    {
      db,
      objects,
      dispatcher,
      fleet: localFleet({
        nodeId: 'node-api',
        capacity: 4,
        since,
        healthy: () => host.queue.lifecycle === 'running',
        running: () => host.queue.runningHere().length,
        queued: async () => (await countLiveCommands(db)).queued,
        toolchain: () => host.toolchain(),
      }),
      workbenchRoot: root,
      metrics: host.queue.metrics.registry,
      cancelCommand: (commandId) => host.queue.cancel(commandId),
      log,
      ...options.api,
    },
    { host: '127.0.0.1', port: 0 },
  );
  t.teardown(() => api.close());
  const alice = (await createApiToken(db, 'alice')).token;
  const bob = (await createApiToken(db, 'bob')).token;
  const alicePerson = (await createApiToken(db, 'alice', { kind: 'person' })).token;
  const bobPerson = (await createApiToken(db, 'bob', { kind: 'person' })).token;

  const call = (token: string | null, path: string, init: RequestInit = {}) =>
    fetch(`${api.url}${path}`, {
      ...init,
      headers: {
        ...(token === null ? {} : { authorization: `Bearer ${token}` }),
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(init.headers as Record<string, string> | undefined),
      },
    });
  const json = async <T>(token: string | null, method: string, path: string, body?: unknown) => {
    const res = await call(token, path, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as T };
  };
  const newRun = async (token: string) =>
    (await json<{ run: { id: string } }>(token, 'POST', '/v1/runs', {})).body.run.id;
  const dispatch = async (token: string, runId: string, action: string, args: object) => {
    const res = await json<DispatchAnswer>(
      token,
      'POST',
      '/v1/dispatch',
      envelope(runId, action, args as Record<string, unknown>),
    );
    if (res.status !== 200) throw new Error(`dispatch answered HTTP ${res.status}`);
    return res.body;
  };
  return {
    url: api.url,
    db,
    objects,
    host,
    answered,
    base,
    root,
    alice,
    bob,
    alicePerson,
    bobPerson,
    call,
    json,
    newRun,
    dispatch,
  };
}

/** A dispatch envelope for `runId`. */
export function envelope(runId: string, action: string, args: Record<string, unknown>) {
  return { action, args, runId, agentId: 'agent-test', taskId: 'task-test' };
}
