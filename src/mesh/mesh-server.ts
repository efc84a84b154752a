/**
 * The gRPC server of a node: `NodeService.Stream` (when the node serves requests)
 * and `grpc.health.v1.Health` (always). It authenticates streams by the mesh token,
 * says hello, sends a Health frame every {@link HEALTH_INTERVAL_MS}, at once when its
 * health changes and when its load changes once the change has held for
 * {@link LOAD_SETTLE_MS}, and shuts down gracefully: {@link MeshServer.drain} stops
 * taking calls and reports unhealthy, lets in-flight calls finish within a grace period and aborts
 * the rest; {@link MeshServer.close} then ends every stream and stops the server.
 *
 * Lifecycle ({@link MESH_SERVER_LIFECYCLE}, one log line per move): `new` -> `serving`
 * (bound) -> `draining` (no new calls) -> `closed`. Drain and close may come at any
 * point before `closed`, which is final.
 *
 * @module
 */

import {
  Server,
  type ServerDuplexStream,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import type { ListenAddress, MeshTlsConfig } from '../config/index.js';
import { NODE_DRAINING, NodeStoppingError, type Toolchain } from '../contract/index.js';
import type { Logger } from '../telemetry/index.js';
import { defineStateMachine, StateMachine } from '../telemetry/index.js';
import type { HealthFrame, HelloFrame, NodeType } from './frames.js';
import { tolerantDeserializer } from './frames.js';
import { HealthStatusTable } from './health-service.js';
import {
  HEALTH_INTERVAL_MS,
  LOAD_SETTLE_MS,
  MAX_FRAME_BYTES,
  serverChannelOptions,
} from './limits.js';
import { checkMeshToken } from './mesh-auth.js';
import { serverCredentials } from './mesh-credentials.js';
import { loadMeshProtos, NODE_SERVICE_NAME } from './proto.js';
import { type RequestHandler, ServerSession, type SessionHost } from './server-session.js';
import { settleWithin } from './settle-within.js';
import { streamRefusal } from './wire-errors.js';

/** How long aborted calls get to answer once the grace period is over. */
const ABORT_SETTLE_MS = 2_000;
/** How long {@link MeshServer.close} waits for a clean shutdown before forcing it. */
const CLOSE_TIMEOUT_MS = 2_000;

/** The state of a {@link MeshServer}. */
export type MeshServerState = 'new' | 'serving' | 'draining' | 'closed';

/** A {@link MeshServer}'s lifecycle, logged as `mesh-server`. */
export const MESH_SERVER_LIFECYCLE = defineStateMachine<MeshServerState>('mesh-server', 'new', {
  new: ['serving', 'draining', 'closed'],
  serving: ['draining', 'closed'],
  draining: ['closed'],
  closed: [],
});

/** Options of {@link MeshServer}. */
export interface MeshServerOptions {
  readonly nodeId: string;
  readonly nodeType: NodeType;
  /** The build's version, sent in hello. */
  readonly version: string;
  /** `MEMQL_MESH_TOKEN`; `null` accepts every stream, unauthenticated. */
  readonly token: string | null;
  /** `MEMQL_TLS_*`; `null` serves plaintext. */
  readonly tls: MeshTlsConfig | null;
  readonly log: Logger;
  /** Answers requests; `null` for a node that serves only health. */
  readonly handler: RequestHandler | null;
  /**
   * Takes `NodeService.Stream` calls itself: the agent's worker hub, whose streams are
   * opened by worker hosts and authenticated by their users' API tokens rather than
   * the mesh token. With `handler` too, a stream that presents the configured mesh
   * token is a peer node's and is served by `handler`; every other stream (and every
   * stream when no mesh token is configured) goes here.
   */
  readonly acceptStream?: (call: ServerDuplexStream<unknown, unknown>) => void;
  /** Calls the node runs at once, reported in health frames. Default 1. */
  readonly capacity?: number;
  /**
   * The node's load for health frames. Default: from the calls in flight on its
   * streams, `running = min(inFlight, capacity)` and `queued` the rest: a call in
   * flight is either running or waiting for a slot.
   */
  readonly load?: () => { running: number; queued: number };
  /**
   * What the node's sandbox can run for a build, for health frames; `null` while it
   * is not known. Default: never known (a node that takes no builds). Call
   * {@link MeshServer.healthChanged} when it becomes known.
   */
  readonly toolchain?: () => Toolchain | null;
  /** Health frame period, ms. Default {@link HEALTH_INTERVAL_MS}. */
  readonly healthIntervalMs?: number;
  /** Largest frame accepted, bytes. Default {@link MAX_FRAME_BYTES}. */
  readonly maxFrameBytes?: number;
}

/** The outcome of {@link MeshServer.drain}. */
export interface DrainOutcome {
  /** Calls that finished within the grace period. */
  readonly finished: number;
  /** Calls still running when it ended, which were aborted. */
  readonly aborted: number;
}

/** A node's gRPC server. */
export class MeshServer {
  private readonly server: Server;
  private readonly health = new HealthStatusTable();
  private readonly sessions = new Set<ServerSession>();
  private readonly tasks = new Map<Promise<void>, AbortController>();
  private readonly machine: StateMachine<MeshServerState>;
  private ticker: NodeJS.Timeout | undefined;
  /** A load change waiting to settle before it is reported. */
  private settling: NodeJS.Timeout | undefined;
  /** The load of the last Health frame sent, `running/queued`. */
  private lastLoad = '';
  private readonly hello: HelloFrame;
  private readonly capacity: number;

  constructor(private readonly options: MeshServerOptions) {
    const maxFrameBytes = options.maxFrameBytes ?? MAX_FRAME_BYTES;
    this.server = new Server(serverChannelOptions(maxFrameBytes));
    this.hello = {
      kind: 'hello',
      nodeId: options.nodeId,
      nodeType: options.nodeType,
      version: options.version,
    };
    this.capacity = Math.max(1, options.capacity ?? 1);
    this.machine = new StateMachine(MESH_SERVER_LIFECYCLE, options.log);
    const protos = loadMeshProtos();
    this.server.addService(protos.healthService, this.health.implementation());
    this.health.set('', 'NOT_SERVING');
    if (options.handler) {
      this.server.addService(
        tolerantService(protos.nodeService, maxFrameBytes),
        this.streamImplementation(options.handler, options.acceptStream),
      );
      this.health.set(NODE_SERVICE_NAME, 'NOT_SERVING');
    } else if (options.acceptStream) {
      this.server.addService(tolerantService(protos.nodeService, maxFrameBytes), {
        Stream: options.acceptStream,
      });
      this.health.set(NODE_SERVICE_NAME, 'NOT_SERVING');
    }
  }

  /** Where the server is in its lifecycle. */
  get state(): MeshServerState {
    return this.machine.state;
  }

  /** Calls running now. */
  get inFlight(): number {
    return this.tasks.size;
  }

  /** Binds and starts serving; resolves to the bound address (port 0 picks one). */
  async start(listen: ListenAddress): Promise<ListenAddress> {
    const host = listen.host.includes(':') ? `[${listen.host}]` : listen.host;
    const port = await new Promise<number>((resolve, reject) => {
      this.server.bindAsync(
        `${host}:${listen.port}`,
        serverCredentials(this.options.tls),
        (err, bound) => (err ? reject(err) : resolve(bound)),
      );
    });
    this.machine.moveTo('serving', { grpcAddress: `${host}:${port}` });
    this.health.setAll('SERVING');
    const every = this.options.healthIntervalMs ?? HEALTH_INTERVAL_MS;
    this.ticker = setInterval(() => this.broadcastHealth(), every);
    this.ticker.unref();
    this.options.log.info({ grpcAddress: `${host}:${port}` }, 'mesh server listening');
    return { host: listen.host, port };
  }

  /** The health frame this node sends now. */
  healthFrame(): HealthFrame {
    const n = this.tasks.size;
    const load = this.options.load?.() ?? {
      running: Math.min(n, this.capacity),
      queued: Math.max(0, n - this.capacity),
    };
    const toolchain = this.options.toolchain?.() ?? null;
    return {
      kind: 'health',
      healthy: !this.shuttingDown,
      running: load.running,
      queued: load.queued,
      capacity: this.capacity,
      ...(toolchain ? { toolchain } : {}),
    };
  }

  /**
   * Sends a fresh Health frame on every stream now: something it reports changed (the
   * toolchain probe ended), and agents should not wait for the next period to see it.
   */
  healthChanged(): void {
    if (this.state === 'serving') this.broadcastHealth();
  }

  /**
   * Stops taking calls (new requests are answered `unavailable`), reports unhealthy
   * on every stream and to health probes, and waits up to `graceMs` for in-flight
   * calls. Calls still running then are aborted with a {@link NodeStoppingError}
   * reason (a command they queued is not cancelled: it is recorded when it ends, here
   * or on the workspace's next holder) and given a moment to answer.
   */
  async drain(graceMs: number): Promise<DrainOutcome> {
    this.machine.moveTo('draining');
    this.health.setAll('NOT_SERVING');
    this.broadcastHealth();
    const started = this.tasks.size;
    this.options.log.info({ inFlight: started, graceMs }, 'draining: no new calls');
    await settleWithin([...this.tasks.keys()], graceMs);
    const left = [...this.tasks.entries()];
    for (const [, controller] of left) controller.abort(new NodeStoppingError(this.options.nodeId));
    if (left.length > 0) {
      this.options.log.warn({ aborted: left.length }, 'grace period over: in-flight calls aborted');
      await settleWithin(
        left.map(([task]) => task),
        ABORT_SETTLE_MS,
      );
    }
    return { finished: started - left.length, aborted: left.length };
  }

  /** Ends every stream and stops the server. Idempotent. */
  async close(): Promise<void> {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
    clearTimeout(this.settling);
    this.machine.moveTo('closed');
    for (const [, controller] of this.tasks) {
      controller.abort(new NodeStoppingError(this.options.nodeId));
    }
    for (const session of [...this.sessions]) session.end();
    this.health.endWatches();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, CLOSE_TIMEOUT_MS);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Draining or closed: no new calls, and unhealthy to every stream and probe. */
  private get shuttingDown(): boolean {
    return this.state === 'draining' || this.state === 'closed';
  }

  private broadcastHealth(): void {
    clearTimeout(this.settling);
    this.settling = undefined;
    const frame = this.healthFrame();
    this.lastLoad = `${frame.running}/${frame.queued}`;
    for (const session of this.sessions) session.sendHealth(frame);
  }

  /**
   * Reports a change of load once it has held for {@link LOAD_SETTLE_MS}, if it still
   * differs from the last frame sent then; the periodic frame carries it anyway. A
   * short call thus adds no frame to its stream while it runs or right after its
   * answer.
   */
  private loadChanged(): void {
    if (this.settling !== undefined) return;
    this.settling = setTimeout(() => {
      this.settling = undefined;
      const frame = this.healthFrame();
      if (`${frame.running}/${frame.queued}` !== this.lastLoad) this.broadcastHealth();
    }, LOAD_SETTLE_MS);
    this.settling.unref();
  }

  private streamImplementation(
    handler: RequestHandler,
    others?: (call: ServerDuplexStream<unknown, unknown>) => void,
  ): UntypedServiceImplementation {
    const log = this.options.log.child({ component: 'mesh-server' });
    const host: SessionHost = {
      hello: this.hello,
      handler,
      log,
      admit: () =>
        this.shuttingDown
          ? {
              errorCode: 'unavailable',
              message: `unavailable: node "${this.options.nodeId}" is shutting down and takes no new calls; retry, and another replica will be picked`,
              // Nothing ran: the agent may send the call to another replica at once.
              payload: Buffer.from(
                JSON.stringify({ reason: NODE_DRAINING, nodeId: this.options.nodeId }),
              ),
            }
          : null,
      track: (task, controller) => {
        const running: Promise<void> = task(controller.signal).finally(() => {
          this.tasks.delete(running);
          this.loadChanged();
        });
        this.tasks.set(running, controller);
        this.loadChanged();
      },
      health: () => this.healthFrame(),
      closed: (session) => this.sessions.delete(session),
    };
    return {
      Stream: (call: ServerDuplexStream<unknown, unknown>) => {
        const auth = checkMeshToken(this.options.token, call.metadata);
        if (others && !(auth.ok && auth.authenticated)) {
          // Not a peer node's stream: a worker host's, which its own hub authenticates.
          others(call);
          return;
        }
        if (!auth.ok) {
          log.warn(
            { peer: call.getPeer(), reason: auth.reason },
            'stream refused: mesh token missing or wrong',
          );
          call.emit(
            'error',
            streamRefusal(
              'unauthenticated',
              `unauthenticated: the mesh token is ${auth.reason}; present MEMQL_MESH_TOKEN as "authorization: Bearer <token>"`,
            ),
          );
          return;
        }
        const session = new ServerSession(call, host, auth.authenticated);
        this.sessions.add(session);
        session.start();
      },
    };
  }
}

/** The node service with deserializers that never throw (see `tolerantDeserializer`). */
function tolerantService(service: ServiceDefinition, maxFrameBytes: number): ServiceDefinition {
  const out: Record<string, ServiceDefinition[string]> = {};
  for (const [name, method] of Object.entries(service)) {
    out[name] = {
      ...method,
      requestDeserialize: tolerantDeserializer(method.requestDeserialize, maxFrameBytes),
    };
  }
  return out as ServiceDefinition;
}
