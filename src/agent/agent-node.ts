/**
 * An agent node's parts, built from its configuration: the peer registry and router
 * (when `MEMQL_WORKBENCH_REMOTE=1`), the dispatcher, and the gRPC server that serves
 * `grpc.health.v1`. The binary (`nodes/agent/main.ts`) and test harnesses call
 * {@link startAgentNode}; the handles it needs (database, logger, in-process
 * workbench) are passed in.
 *
 * @module
 */

import type { Config, ListenAddress } from '../config/index.js';
import type { DispatchTarget } from '../mesh/index.js';
import {
  MeshServer,
  PeerRegistry,
  type PeerRegistryOptions,
  type PeerResolver,
} from '../mesh/index.js';
import type { Logger } from '../telemetry/logger.js';
import { AgentDispatcher } from './dispatcher.js';
import { registryRouter, type WorkbenchRouter } from './router.js';

/** The node type agent nodes route workbench calls to. */
export const WORKBENCH_PEER_TYPE = 'workbench';

/** What {@link startAgentNode} needs besides the configuration. */
export interface AgentNodeDeps {
  readonly config: Config;
  readonly log: Logger;
  /** The in-process workbench: required when not remote, or with the fallback. */
  readonly local: DispatchTarget | null;
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
}

/** A running agent node. */
export interface AgentNode {
  readonly dispatcher: AgentDispatcher;
  /** `null` when not remote, or when no router could be wired. */
  readonly registry: PeerRegistry | null;
  /** Where `grpc.health.v1` is served; null when it is not. */
  readonly grpcAddress: ListenAddress | null;
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
  });
  if (deps.serveGrpc === false) {
    return {
      dispatcher,
      registry,
      grpcAddress: null,
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
    handler: null,
  });
  let grpcAddress: ListenAddress;
  try {
    grpcAddress = await server.start(config.listen.grpc);
  } catch (err) {
    registry?.close();
    throw err;
  }
  return {
    dispatcher,
    registry,
    grpcAddress,
    async close() {
      registry?.close();
      await server.close();
    },
  };
}
