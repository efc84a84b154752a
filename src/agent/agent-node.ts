/**
 * An agent node's parts, built from its configuration: the peer registry and router
 * (when `MEMQL_WORKBENCH_REMOTE=1`), the dispatcher, and the gRPC server that serves
 * `grpc.health.v1`. The binary (`nodes/agent/main.ts`) and test harnesses call
 * {@link startAgentNode}; the handles it needs (database, logger, in-process
 * workbench) are passed in.
 *
 * @module
 */

import { type Config, formatHostPort, type ListenAddress } from '../config/index.js';
import type { DispatchTarget, PortTarget, RunReleaseTarget } from '../mesh/index.js';
import {
  AgentPeers,
  MeshServer,
  PeerRegistry,
  type PeerRegistryOptions,
  type PeerResolver,
  WorkerHub,
} from '../mesh/index.js';
import {
  type Db,
  getRunForOwner,
  listenForKillSwitch,
  readConsentState,
  recordWorkerConnected,
  recordWorkerDisconnected,
  resolveTokenIdentity,
  type Subscription,
} from '../store/index.js';
import type { Logger } from '../telemetry/index.js';
import { AgentDispatcher } from './dispatcher.js';
import { type PortOpener, portOpener } from './port-opener.js';
import { registryRouter, type WorkbenchRouter } from './router.js';
import { releaseRunOnReplicas } from './run-release.js';
import { type WorkerCallStopper, WorkerCalls } from './worker-calls.js';
import {
  forwardedWorkerCalls,
  vouchForWorkerLinks,
  WorkerLinksAcrossAgents,
} from './worker-forward.js';
import { WorkerReroute } from './worker-reroute.js';

/** The node type agent nodes route workbench calls to. */
export const WORKBENCH_PEER_TYPE = 'workbench';

/** What {@link startAgentNode} needs besides the configuration. */
export interface AgentNodeDeps {
  readonly config: Config;
  readonly log: Logger;
  /**
   * The in-process workbench: required when not remote, or with the fallback. When it
   * can let go of runs (`releaseRun`), {@link AgentNode.releaseRun} asks it too; when
   * it can open ports in its sandboxes (`openPort`), {@link AgentNode.openPort} uses it.
   */
  readonly local: (DispatchTarget & Partial<RunReleaseTarget> & Partial<PortTarget>) | null;
  /** The run's live workspace node (see `AgentDispatcherOptions.readAffinity`). */
  readonly readAffinity: (runId: string) => Promise<string | null>;
  /** The build's version, for hello. */
  readonly version: string;
  /** Resolves seeds; default DNS. Tests inject one. */
  readonly resolver?: PeerResolver;
  /** Registry tuning for tests (backoff, re-resolve period). */
  readonly registry?: Partial<
    Pick<PeerRegistryOptions, 'backoff' | 'resolveIntervalMs' | 'healthStaleMs'>
  >;
  /** Bounded wait for a healthy peer, ms. */
  readonly peerWaitMs?: number;
  /**
   * Serve `grpc.health.v1` on `MEMQL_GRPC_LISTEN`. Default true; the local node, one
   * process with its own workbench and nothing to probe over gRPC, passes false.
   */
  readonly serveGrpc?: boolean;
  /**
   * The database, for worker hosts: with it (and the gRPC server), worker hosts may
   * connect to this node's `NodeService.Stream` with their users' API tokens, and calls
   * the workbench cannot serve are rerouted to them through the consent gate. A remote
   * node opens ports on its replicas only with it (the run's owner is read there).
   */
  readonly db?: Db;
}

/** A running agent node. */
export interface AgentNode {
  readonly dispatcher: AgentDispatcher;
  /** `null` when not remote, or when no router could be wired. */
  readonly registry: PeerRegistry | null;
  /** Where `grpc.health.v1` is served; null when it is not. */
  readonly grpcAddress: ListenAddress | null;
  /** The worker hosts connected here; null when this node takes none. */
  readonly workers: WorkerHub | null;
  /**
   * The worker hosts calls arriving here reach: those connected here, and those whose
   * streams peer agent replicas hold (for the API's worker list). Null with `workers`.
   */
  readonly workerDirectory: WorkerLinksAcrossAgents | null;
  /** Where peer agent replicas reach this node (`MEMQL_GRPC_ADVERTISE`); null: they do not. */
  readonly advertisedAddress: string | null;
  /**
   * Lets go of what workbenches keep of a run that was just ended or deleted: the
   * in-process one's, and every connected replica's (see `run-release.ts`). Never throws.
   */
  releaseRun(runId: string): Promise<void>;
  /**
   * Opens a connection to a port in a run's sandbox for the port route: on the
   * in-process workbench, or on the replica holding the run over the mesh (see
   * `port-opener.ts`). Null when this node has neither.
   */
  readonly openPort: PortOpener | null;
  /**
   * Stops this node's calls on worker hosts when a kill switch is turned on (the API
   * route calls it; other nodes' routes reach it through the store's notice). Null
   * when this node takes no worker hosts.
   */
  readonly workerCalls: WorkerCallStopper | null;
  /** Stops the registry and the server. */
  close(): Promise<void>;
}

/**
 * Wires and starts an agent node. When remote mode is on but no `workbench=` seed
 * is configured, it logs an ERROR and still starts: every call then refuses with
 * `no_workbench_peer` (or runs locally with the explicit fallback), so the problem is
 * loud rather than a node that silently does the work itself.
 */
export async function startAgentNode(deps: AgentNodeDeps): Promise<AgentNode> {
  const { config, log } = deps;
  let registry: PeerRegistry | null = null;
  let router: WorkbenchRouter | null = null;
  let unwiredReason: string | undefined;
  if (config.workbenchRemote) {
    const seeds = config.workerPeers.filter((s) => s.type === WORKBENCH_PEER_TYPE);
    if (seeds.length === 0) {
      unwiredReason = `MEMQL_WORKER_PEERS has no "${WORKBENCH_PEER_TYPE}=" seed, so no router is wired`;
      log.error(
        {
          workerPeers: config.workerPeersRaw,
          localFallback: config.workbenchLocalFallback,
        },
        `MEMQL_WORKBENCH_REMOTE=1 but ${unwiredReason}: every workbench call on this node will ${
          config.workbenchLocalFallback
            ? 'run locally (MEMQL_WORKBENCH_LOCAL_FALLBACK=1)'
            : 'be refused with no_workbench_peer'
        }`,
      );
    } else {
      registry = new PeerRegistry({
        seeds,
        self: { nodeId: config.nodeId, nodeType: 'agent', version: deps.version },
        token: config.mesh.token,
        tls: config.mesh.tls,
        log,
        ...(deps.resolver ? { resolver: deps.resolver } : {}),
        ...deps.registry,
      });
      await registry.start();
      router = registryRouter(registry);
    }
  }
  if (!config.workbenchRemote || config.workbenchLocalFallback) {
    if (deps.local === null)
      throw new Error('an in-process workbench is needed: not remote, or fallback on');
  }
  // Where peers reach this node, known once the server is bound (before any worker connects).
  const advertised: { address: string | null } = { address: null };
  const workers =
    deps.serveGrpc !== false && deps.db !== undefined
      ? workerHub(deps.db, deps, log, () => advertised.address)
      : null;
  const workerCalls = workers ? new WorkerCalls() : null;
  // Forwarding between agent replicas rides the mesh token: without one, none.
  const meshToken = config.mesh.token;
  const peers =
    workers && meshToken !== null
      ? new AgentPeers({
          self: { nodeId: config.nodeId, nodeType: 'agent', version: deps.version },
          token: meshToken,
          // As the peers' servers serve (below): TLS only with an identity of their own.
          tls: config.mesh.tls?.identity ? config.mesh.tls : null,
          log,
        })
      : null;
  const links =
    workers && deps.db
      ? new WorkerLinksAcrossAgents({
          hub: workers,
          db: deps.db,
          nodeId: config.nodeId,
          peers,
          log,
        })
      : null;
  const killSwitches =
    workerCalls && deps.db ? await listenForKillSwitches(deps.db, workerCalls, log) : null;
  const dispatcher = new AgentDispatcher({
    remote: config.workbenchRemote,
    localFallback: config.workbenchLocalFallback,
    local: deps.local,
    router,
    ...(unwiredReason ? { unwiredReason } : {}),
    readAffinity: deps.readAffinity,
    peersRaw: config.workerPeersRaw,
    peerType: WORKBENCH_PEER_TYPE,
    log,
    ...(deps.peerWaitMs !== undefined ? { peerWaitMs: deps.peerWaitMs } : {}),
    ...(links && workerCalls && deps.db
      ? {
          reroute: new WorkerReroute({
            db: deps.db,
            links,
            log,
            calls: workerCalls,
            nodeId: config.nodeId,
          }),
        }
      : {}),
  });
  const releaseRun = async (runId: string): Promise<void> => {
    await Promise.all([
      deps.local?.releaseRun?.(runId).catch((err: unknown) => {
        log.warn({ err, runId }, 'the in-process workbench could not let go of an ended run');
      }),
      registry ? releaseRunOnReplicas(registry, runId, { log }) : undefined,
    ]);
  };
  const openPort = portOpener({
    remote: config.workbenchRemote,
    local: deps.local,
    registry,
    readAffinity: deps.readAffinity,
    ...(deps.db ? { ownsRun: ownsRunIn(deps.db) } : {}),
  });
  if (deps.serveGrpc === false) {
    return {
      dispatcher,
      registry,
      grpcAddress: null,
      workers: null,
      workerDirectory: null,
      advertisedAddress: null,
      releaseRun,
      openPort,
      workerCalls: null,
      async close() {
        registry?.close();
      },
    };
  }
  const server = new MeshServer({
    nodeId: config.nodeId,
    nodeType: 'agent',
    version: deps.version,
    token: config.mesh.token,
    // This server carries health only; a node that verifies peers but has no identity
    // of its own serves it in plaintext rather than not at all.
    tls: config.mesh.tls?.identity ? config.mesh.tls : null,
    log,
    // Peer replicas' forwarded worker calls, on streams presenting the mesh token.
    handler: workers && peers ? forwardedWorkerCalls(workers, config.nodeId, log) : null,
    ...(workers ? { acceptStream: workers.accept } : {}),
  });
  let grpcAddress: ListenAddress;
  try {
    grpcAddress = await server.start(config.listen.grpc);
  } catch (err) {
    registry?.close();
    peers?.close();
    await killSwitches?.close().catch(() => {});
    throw err;
  }
  advertised.address = peers ? advertisedAddress(config, grpcAddress) : null;
  if (workers && peers && advertised.address === null) {
    log.warn(
      { grpcListen: formatHostPort(config.listen.grpc) },
      'MEMQL_GRPC_ADVERTISE is unset and MEMQL_GRPC_LISTEN is a wildcard: worker hosts connected here serve only the calls that arrive here',
    );
  }
  const stopVouching =
    workers && deps.db ? vouchForWorkerLinks(deps.db, workers, config.nodeId, log) : () => {};
  return {
    dispatcher,
    registry,
    grpcAddress,
    workers,
    workerDirectory: links,
    advertisedAddress: advertised.address,
    releaseRun,
    openPort,
    workerCalls,
    async close() {
      stopVouching();
      registry?.close();
      peers?.close();
      workers?.close();
      await killSwitches?.close().catch(() => {});
      await server.close();
    },
  };
}

/**
 * Stops this node's worker calls on every kill switch turned on anywhere (the store's
 * notice, sent by whichever agent node served the route). Each time the listening
 * connection is (re)established, the switches of the users with calls in flight are
 * read once, since a notice sent while it was down is lost. Null on a driver that
 * cannot listen (PGlite: one process, whose route stops the calls itself).
 */
async function listenForKillSwitches(
  db: Db,
  calls: WorkerCalls,
  log: Logger,
): Promise<Subscription | null> {
  const stop = (userId: string, workerId: string | null, why: string) => {
    const stopped = calls.stopForKillSwitch(userId, workerId);
    if (stopped > 0) log.info({ userId, workerId, stopped, why }, 'worker calls stopped');
  };
  const catchUp = async () => {
    for (const userId of calls.users()) {
      const state = await readConsentState(db, userId);
      if (state.allKilled) stop(userId, null, 'kill switch read after reconnecting');
      for (const [workerId, consent] of state.workers) {
        if (consent.killSwitch) stop(userId, workerId, 'kill switch read after reconnecting');
      }
    }
  };
  const listening = listenForKillSwitch(
    db,
    (notice) => stop(notice.ownerUserId, notice.workerId, 'kill switch notice'),
    () => {
      catchUp().catch((err: unknown) =>
        log.warn({ err }, 'reading kill switches after the listener reconnected failed'),
      );
    },
  );
  return listening === null ? null : await listening;
}

/** Whether a user owns a run, read from the store (the port route's check). */
function ownsRunIn(db: Db): (runId: string, userId: string) => Promise<boolean> {
  return async (runId, userId) => (await getRunForOwner(db, runId, userId)) !== null;
}

/** The refusal of a person token on a worker stream. */
const PERSON_TOKEN_ON_WORKER =
  'unauthenticated: MEMQL_WORKER_TOKEN is a person token, which decides consent; the commands a worker runs can read its environment, so a worker takes only an agent token of its user (memql tokens create, or the agent token npm start prints)';

/**
 * Where peer replicas reach this node: `MEMQL_GRPC_ADVERTISE`, else the bound listen
 * address when its host is a specific one (a wildcard names no reachable address).
 */
function advertisedAddress(config: Config, bound: ListenAddress): string | null {
  if (config.listen.grpcAdvertise) return formatHostPort(config.listen.grpcAdvertise);
  const host = bound.host;
  if (host === '' || host === '0.0.0.0' || host === '::') return null;
  return formatHostPort(bound);
}

/** The hub worker hosts connect to, recording each connection in the store. */
function workerHub(
  db: Db,
  deps: AgentNodeDeps,
  log: AgentNodeDeps['log'],
  address: () => string | null,
): WorkerHub {
  const agentNodeId = deps.config.nodeId;
  // One worker's records are written in order, so a quick reconnect cannot be
  // overtaken by the record of the stream it replaced.
  const chains = new Map<string, Promise<void>>();
  const record = (key: string, what: string, work: () => Promise<void>) => {
    const next = (chains.get(key) ?? Promise.resolve())
      .then(work)
      .catch((err: unknown) => log.warn({ err }, `recording a worker's ${what} failed`))
      .finally(() => {
        if (chains.get(key) === next) chains.delete(key);
      });
    chains.set(key, next);
  };
  return new WorkerHub({
    self: { nodeId: agentNodeId, nodeType: 'agent', version: deps.version },
    authenticate: async (token) => {
      const identity = await resolveTokenIdentity(db, token);
      if (identity === null) return null;
      // A worker's commands run as its user and can read its environment: a person
      // token there would let the agent decide consent for itself.
      if (identity.kind === 'person') return { refused: PERSON_TOKEN_ON_WORKER };
      return identity.userId;
    },
    onConnected: (link) =>
      record(`${link.userId}\n${link.workerId}`, 'connection', async () => {
        await recordWorkerConnected(db, {
          ownerUserId: link.userId,
          workerId: link.workerId,
          os: link.offer.os,
          provides: [...link.offer.provides],
          version: link.version,
          agentNodeId,
          agentAddress: address(),
        });
      }),
    onDisconnected: (link) =>
      record(`${link.userId}\n${link.workerId}`, 'disconnection', () =>
        recordWorkerDisconnected(db, link.userId, link.workerId, agentNodeId),
      ),
    log,
  });
}
