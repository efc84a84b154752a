import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import type { DispatchResult } from '../../src/contract/index.js';
import {
  createRun,
  type Db,
  getLiveWorkspace,
  openDb,
  provisionWorkspace,
} from '../../src/store/index.js';
import { eventually } from './mesh.js';
import {
  AgentHarness,
  type HarnessOutcome,
  type MeshTestEnv,
  startWorkbench,
  type WorkbenchProcess,
} from './mesh-harness.js';
import { type NodeProcess, nodeMain, spawnNode } from './node-process.js';
import { createTestDatabase } from './postgres.js';
import { type S3TestServer, s3NodeEnv, startS3Server } from './s3-server.js';

/**
 * An agent and workbench replicas, each its own process, on a real Postgres and a
 * real object store (the filesystem one, or s3rver): the shape an operator runs, for
 * tests of what must never be lost.
 */
export interface DurableMeshOptions {
  store: 'fs' | 's3';
  /** Replica node ids; default `wb-a`, `wb-b`. */
  nodes?: string[];
  /** Extra environment of every replica (`MEMQL_NODE_LIVENESS_MS`, say). */
  env?: Record<string, string>;
  /** Extra environment of one replica, over `env` (its runner, say). */
  replicaEnv?: (nodeId: string) => Record<string, string>;
  /** Arguments of every replica (`--shutdown-grace-ms=...`). */
  args?: string[];
  /** Arguments of node itself for every replica and the API agent (`--trace-gc`). */
  nodeArgs?: string[];
  /**
   * The Postgres server the mesh's database is made on: a cluster the test started
   * (`pg-cluster.ts`, one it may pause). Default: the shared test server.
   */
  serverUrl?: string;
  /** `MEMQL_DATABASE_URL` of the replicas, when they reach Postgres another way (a proxy). */
  replicaDatabaseUrl?: (databaseUrl: string, nodeId: string) => string;
}

/** The replicas' view of the store: what they are started with. */
function storeEnv(
  store: 'fs' | 's3',
  objectsDir: string,
  s3: S3TestServer | null,
): Record<string, string> {
  if (store === 'fs' || s3 === null) return { MEMQL_OBJECT_STORE_DIR: objectsDir };
  return s3NodeEnv(s3);
}

/** A running mesh; everything is stopped and removed at the test's teardown. */
export class DurableMesh {
  readonly replicas = new Map<string, WorkbenchProcess>();
  /** Every replica process started, restarts included, oldest first. */
  readonly started: WorkbenchProcess[] = [];
  private task = 0;

  private constructor(
    private readonly t: Test,
    readonly db: Db,
    readonly databaseUrl: string,
    /** The agent process; {@link restartAgent} replaces it. */
    public agent: AgentHarness,
    private readonly env: MeshTestEnv,
    private readonly options: DurableMeshOptions,
    private readonly extraEnv: Record<string, string>,
    /** The listening address of each replica, kept so a restart binds it again. */
    private readonly addresses: Map<string, { host: string; port: number }>,
  ) {}

  static async start(t: Test, options: DurableMeshOptions): Promise<DurableMesh> {
    const database = await createTestDatabase(options.serverUrl);
    t.teardown(() => database.drop());
    const db = await openDb({ kind: 'postgres', url: database.url });
    t.teardown(() => db.close());
    const baseDir = await mkdtemp(join(tmpdir(), 'memql-durable-'));
    await chmod(baseDir, 0o755);
    t.teardown(() => rm(baseDir, { recursive: true, force: true }));
    const objectsDir = join(baseDir, 'objects');
    await mkdir(objectsDir);
    const s3 = options.store === 's3' ? await startS3Server({ bucket: 'memql-durable' }) : null;
    if (s3) t.teardown(() => s3.stop());
    const env: MeshTestEnv = {
      databaseUrl: database.url,
      token: 'durable-mesh-token-0123456789',
      baseDir,
      objectsDir,
    };
    const extraEnv = { ...storeEnv(options.store, objectsDir, s3), ...options.env };
    const nodes = options.nodes ?? ['wb-a', 'wb-b'];
    const addresses = new Map<string, { host: string; port: number }>();
    const replicas: WorkbenchProcess[] = [];
    let port = 0;
    for (const [i, nodeId] of nodes.entries()) {
      const host = `127.0.0.${i + 1}`;
      const wb = await startWorkbench(
        t,
        env,
        nodeId,
        { host, port },
        {
          ...extraEnv,
          ...options.replicaEnv?.(nodeId),
          ...DurableMesh.dbEnv(options, database.url, nodeId),
        },
        options.args ?? [],
        options.nodeArgs ?? [],
      );
      port = wb.port;
      addresses.set(nodeId, { host, port: wb.port });
      replicas.push(wb);
    }
    const agent = await DurableMesh.startAgent(t, database.url, env, addresses);
    const mesh = new DurableMesh(t, db, database.url, agent, env, options, extraEnv, addresses);
    for (const wb of replicas) {
      mesh.replicas.set(wb.nodeId, wb);
      mesh.started.push(wb);
    }
    await mesh.untilHealthy(nodes);
    return mesh;
  }

  private static startAgent(
    t: Test,
    databaseUrl: string,
    env: MeshTestEnv,
    addresses: Map<string, { host: string; port: number }>,
  ): Promise<AgentHarness> {
    return AgentHarness.start(
      t,
      {
        MEMQL_DATABASE_URL: databaseUrl,
        MEMQL_MESH_TOKEN: env.token,
        MEMQL_WORKBENCH_REMOTE: '1',
        MEMQL_WORKER_PEERS: 'workbench=workbench:50060',
      },
      { workbench: [...addresses.values()] },
    );
  }

  /**
   * Starts a new agent process in place of the current one (after the test killed it),
   * and waits until it sees every live replica healthy.
   */
  async restartAgent(): Promise<AgentHarness> {
    if (this.agent.proc.alive) await this.agent.proc.stop('SIGKILL');
    this.agent = await DurableMesh.startAgent(this.t, this.databaseUrl, this.env, this.addresses);
    const live = [...this.replicas.values()].filter((wb) => wb.proc.alive).map((wb) => wb.nodeId);
    await this.untilHealthy(live);
    return this.agent;
  }

  private static dbEnv(
    options: DurableMeshOptions,
    url: string,
    nodeId: string,
  ): Record<string, string> {
    return options.replicaDatabaseUrl
      ? { MEMQL_DATABASE_URL: options.replicaDatabaseUrl(url, nodeId) }
      : {};
  }

  /**
   * Stops the agent and every replica still running (SIGTERM, so replicas drain) and
   * returns the replicas' exit codes. Call at the end of each test.
   */
  async stop(): Promise<Record<string, number | null>> {
    await this.agent.stop();
    const exits: Record<string, number | null> = {};
    for (const wb of this.replicas.values()) {
      if (!wb.proc.alive) continue;
      const exit = await wb.proc.stop('SIGTERM', 60_000);
      exits[wb.nodeId] = exit.code;
      if (exit.code !== 0) {
        // What the replica said last is what tells why it did not stop cleanly.
        const said = wb.proc.lines.slice(-15).map((l) => JSON.stringify(l));
        this.t.comment(
          `${wb.nodeId} exited ${exit.code ?? exit.signal} on SIGTERM; last lines:\n${said.join('\n')}\nstderr: ${wb.proc.stderr.slice(-3000)}`,
        );
      }
    }
    // Any earlier process of a restarted replica that is somehow still up goes too.
    for (const wb of this.started) if (wb.proc.alive) await wb.proc.stop('SIGKILL');
    return exits;
  }

  /** `MEMQL_WORKBENCH_ROOT` of a replica: its warm copies are `<root>/<runId>`. */
  workbenchRoot(nodeId: string): string {
    return join(this.env.baseDir, nodeId, 'workbenches');
  }

  /** The replica process of `nodeId`. */
  replica(nodeId: string): WorkbenchProcess {
    const wb = this.replicas.get(nodeId);
    if (!wb) throw new Error(`no replica ${nodeId}`);
    return wb;
  }

  /**
   * Starts the agent node binary itself (`nodes/agent/main.js`), remote over this
   * mesh's replicas by their addresses and serving the HTTP API, for tests of routes.
   * The test stops it before {@link stop}.
   */
  async startApiAgent(): Promise<{ proc: NodeProcess; url: string }> {
    const seeds = [...this.addresses.values()].map((a) => `workbench=${a.host}:${a.port}`);
    const proc = spawnNode(
      this.t,
      'agent-api',
      nodeMain('agent'),
      {
        ...this.extraEnv,
        MEMQL_NODE_ID: 'agent-api',
        MEMQL_DATABASE_URL: this.databaseUrl,
        MEMQL_DATA_DIR: join(this.env.baseDir, 'agent-api'),
        MEMQL_MESH_TOKEN: this.env.token,
        MEMQL_WORKBENCH_REMOTE: '1',
        MEMQL_WORKER_PEERS: seeds.join(','),
        MEMQL_HTTP_LISTEN: '127.0.0.1:0',
        MEMQL_GRPC_LISTEN: '127.0.0.1:0',
        MEMQL_LOG_LEVEL: 'info',
      },
      [],
      this.options.nodeArgs ?? [],
    );
    const ready = await proc.waitForLog((l) => l.msg === 'agent node ready');
    return { proc, url: String(ready.apiUrl) };
  }

  /** Waits until the agent sees every named replica connected and healthy. */
  async untilHealthy(nodeIds: string[]): Promise<void> {
    await eventually(
      `replicas ${nodeIds} healthy`,
      async () => {
        const peers = await this.agent.peers();
        return nodeIds.every((id) => peers.some((p) => p.nodeId === id && p.healthy));
      },
      120_000,
    );
  }

  /** Starts a stopped replica again on its address. */
  async restart(nodeId: string): Promise<WorkbenchProcess> {
    const address = this.addresses.get(nodeId);
    if (!address) throw new Error(`no replica ${nodeId}`);
    const wb = await startWorkbench(
      this.t,
      this.env,
      nodeId,
      address,
      {
        ...this.extraEnv,
        ...this.options.replicaEnv?.(nodeId),
        ...DurableMesh.dbEnv(this.options, this.databaseUrl, nodeId),
      },
      this.options.args ?? [],
      this.options.nodeArgs ?? [],
    );
    this.replicas.set(nodeId, wb);
    this.started.push(wb);
    return wb;
  }

  /** A run owned by `owner`, with its workspace held by `nodeId` (so calls route there). */
  async run(runId: string, nodeId?: string, owner = 'alice'): Promise<string> {
    await createRun(this.db, { id: runId, ownerUserId: owner });
    if (nodeId) await provisionWorkspace(this.db, { runId, nodeId, ownerUserId: owner });
    return runId;
  }

  /** The node holding the run's workspace now. */
  async holder(runId: string): Promise<string | null> {
    return (await getLiveWorkspace(this.db, runId))?.nodeId ?? null;
  }

  /**
   * One `workbenchHost` call through the agent, as alice, or as `subject` (a
   * `system:` subject is a system authority, minted in the agent process).
   */
  dispatch(
    runId: string,
    action: string,
    args: Record<string, unknown>,
    extra: { callId?: string; subject?: string } = {},
  ): Promise<HarnessOutcome> {
    this.task += 1;
    const { subject, ...rest } = extra;
    return this.agent.dispatch(
      {
        action,
        args,
        runId,
        agentId: 'agent',
        taskId: `task-${this.task}`,
        ...rest,
      },
      subject,
    );
  }

  /** The workspace rows of a run, oldest first. */
  async rows(runId: string) {
    return this.db.query<{
      node_id: string;
      status: string;
      released_reason: string | null;
      generation: number;
    }>(
      `select node_id, status, released_reason, generation from workbench_workspace
       where run_id = $1 order by generation`,
      [runId],
    );
  }
}

/** The payload of a successful result; fails the test otherwise. */
export function okPayload<T>(t: Test, r: HarnessOutcome | DispatchResult, what: string): T {
  const result = 'result' in r ? r.result : r;
  if (!result.ok) {
    t.fail(`${what}: ${result.errorCode}: ${result.message}`);
    return {} as T;
  }
  return result.payload as T;
}
