import type { Test } from 'tap';
import type { Route } from '../../src/agent/dispatcher.js';
import type { DispatchResult } from '../../src/contract/index.js';
import type { PeerView } from '../../src/mesh/peer-picker.js';
import { fixture, type NodeProcess, nodeMain, spawnNode } from './node-process.js';

/** A workbench node process, with the port it bound. */
export interface WorkbenchProcess {
  readonly proc: NodeProcess;
  readonly host: string;
  readonly port: number;
  readonly nodeId: string;
}

/** Settings every node process of one test shares. */
export interface MeshTestEnv {
  readonly databaseUrl: string;
  readonly token: string;
  /** A base directory; each workbench gets its own root under it. */
  readonly baseDir: string;
  /** The shared object store directory. */
  readonly objectsDir: string;
}

/** Starts `nodes/workbench/main.js` and waits until it serves. */
export async function startWorkbench(
  t: Test,
  env: MeshTestEnv,
  nodeId: string,
  listen: { host: string; port: number },
  extra: Record<string, string> = {},
  args: string[] = [],
  nodeArgs: string[] = [],
): Promise<WorkbenchProcess> {
  const vars: Record<string, string> = {
    MEMQL_NODE_ID: nodeId,
    MEMQL_DATABASE_URL: env.databaseUrl,
    MEMQL_WORKBENCH_ROOT: `${env.baseDir}/${nodeId}/workbenches`,
    MEMQL_DATA_DIR: `${env.baseDir}/${nodeId}/data`,
    MEMQL_OBJECT_STORE_DIR: env.objectsDir,
    MEMQL_GRPC_LISTEN: `${listen.host}:${listen.port}`,
    MEMQL_MESH_TOKEN: env.token,
    MEMQL_RUNNER: 'process',
    MEMQL_LOG_LEVEL: 'info',
    ...extra,
  };
  // The fs store's directory is refused beside the s3 store.
  if (vars.MEMQL_OBJECT_STORE === 's3') delete vars.MEMQL_OBJECT_STORE_DIR;
  const proc = spawnNode(t, nodeId, nodeMain('workbench'), vars, args, nodeArgs);
  const ready = await proc.waitForLog((l) => l.msg === 'workbench node ready');
  return { proc, host: listen.host, port: Number(ready.grpcPort), nodeId };
}

/** One reply of the agent harness to a dispatch. */
export interface HarnessOutcome {
  readonly result: DispatchResult;
  readonly route: Route;
  readonly output: string[];
}

/** The agent harness (test/nodes/fixtures/agent-harness.ts) as a child process. */
export class AgentHarness {
  private nextId = 0;
  private readonly pending = new Map<number, (v: Record<string, unknown>) => void>();
  private seen = 0;

  private constructor(readonly proc: NodeProcess) {
    proc.child.stdout?.on('data', () => this.drain());
  }

  /** Spawns the harness and waits until it is ready. */
  static async start(
    t: Test,
    env: Record<string, string>,
    resolve: Record<string, { host: string; port: number }[]>,
  ): Promise<AgentHarness> {
    const proc = spawnNode(t, 'agent', fixture('nodes/fixtures/agent-harness.js'), {
      MEMQL_NODE_ID: 'agent-1',
      MEMQL_GRPC_LISTEN: '127.0.0.1:0',
      MEMQL_LOG_LEVEL: 'info',
      TEST_RESOLVE: JSON.stringify(resolve),
      ...env,
    });
    await proc.waitForLog((l) => l.msg === 'agent harness ready');
    return new AgentHarness(proc);
  }

  /** One dispatchHost call as user `subject`. */
  dispatch(request: unknown, subject = 'user:alice'): Promise<HarnessOutcome> {
    return this.send({ op: 'dispatch', request, subject }) as unknown as Promise<HarnessOutcome>;
  }

  /** The registry's view of the replicas. */
  async peers(): Promise<PeerView[]> {
    return ((await this.send({ op: 'peers' })) as { peers: PeerView[] }).peers;
  }

  /** Stops the harness (SIGTERM) and returns its exit. */
  stop() {
    return this.proc.stop('SIGTERM');
  }

  private send(msg: Record<string, unknown>): Promise<Record<string, unknown>> {
    this.nextId += 1;
    const id = this.nextId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`agent harness did not answer ${JSON.stringify(msg).slice(0, 200)}`));
      }, 30_000);
      this.pending.set(id, (v) => {
        clearTimeout(timer);
        resolve(v);
      });
      this.proc.child.stdin?.write(`${JSON.stringify({ id, ...msg })}\n`);
    });
  }

  private drain(): void {
    // Replies are parsed by NodeProcess into `other`; settle those not yet seen.
    setImmediate(() => {
      while (this.seen < this.proc.other.length) {
        const line = this.proc.other[this.seen]!;
        this.seen += 1;
        const msg = JSON.parse(line) as Record<string, unknown>;
        const settle = this.pending.get(msg.id as number);
        this.pending.delete(msg.id as number);
        settle?.(msg);
      }
    });
  }
}
