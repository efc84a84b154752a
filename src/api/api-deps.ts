import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Registry } from 'prom-client';
import type {
  Authority,
  DispatchResult,
  EgressBounds,
  EgressPolicy,
  Envelope,
} from '../contract/index.js';
import type { DispatchCallOptions } from '../mesh/index.js';
import type { ObjectStore } from '../objects/index.js';
import type { Command, Db } from '../store/index.js';
import type { Logger } from '../telemetry/index.js';
import type { Caller } from './auth.js';
import type { FleetSource } from './fleet.js';
import type { WorkerDirectory } from './worker-directory.js';

/**
 * The agent's dispatch entry, as the API calls it (`AgentDispatcher.dispatch`): with
 * the envelope the route already parsed, so it is parsed once in this process.
 */
export interface ApiDispatcher {
  dispatch(
    envelope: Envelope,
    authority: Authority,
    options?: DispatchCallOptions,
  ): Promise<{ readonly result: DispatchResult }>;
}

/** Everything the API server is built from; handles the node owns. */
export interface ApiDeps {
  db: Db;
  /** Where promoted artifacts' bytes are read from (and run data deleted). */
  objects: ObjectStore;
  dispatcher: ApiDispatcher;
  fleet: FleetSource;
  /**
   * Remote mode with `MEMQL_WORKBENCH_LOCAL_FALLBACK=1`: calls with no healthy peer run
   * in-process, so `/readyz` does not need a peer. Default false.
   */
  localFallback?: boolean;
  /** The node's `MEMQL_WORKBENCH_ROOT` when it holds workspaces itself (local mode). */
  workbenchRoot?: string;
  /**
   * Lets go of what workbench nodes keep of a run that was just ended or deleted (its
   * warm sandbox, warm copy and upload stages): the in-process workbench's
   * `releaseRun`, and/or the agent's ask of every replica it reaches. The end and
   * delete routes answer once it resolves. Absent: the nodes' sweeps do it.
   */
  releaseRun?: (runId: string) => Promise<void>;
  /**
   * What runs may be given on the network: `MEMQL_EGRESS_CEILING` and the names
   * `MEMQL_EGRESS_SECRETS` defines. Absent: no ceiling, so a run may have no network.
   */
  egress?: EgressBounds;
  /**
   * Told each change of a run's network as this node's API made it, with the policy now
   * in force: the in-process workbench's policy cache, so the run's next connection
   * sees it at once. Other nodes learn it through the store's notice.
   */
  onRunNetworkChanged?: (runId: string, policy: EgressPolicy) => void;
  /**
   * Opens a connection to a port in a run's sandbox (the port route) for `authority`:
   * the agent node's `openPort`, on the in-process workbench or over the mesh to the
   * replica holding the run. It checks the run's owner (`not_found` otherwise) before it
   * connects; the route relies on that. Absent: the route answers `unavailable`.
   */
  openPort?: (runId: string, port: number, authority: Authority) => Promise<Duplex>;
  /** Served at `/metrics`; an empty text when absent. */
  metrics?: Registry;
  log: Logger;
  /** Makes run ids; default `run-<uuid>`. */
  newRunId?: () => string;
  /**
   * The worker hosts connected to this agent node now. Absent (a node that serves no
   * worker hosts): the caller's stored workers are still listed, every one with
   * `connected: false`.
   */
  workers?: WorkerDirectory;
  /**
   * Cancels a command through this node's own queue, when the node runs commands
   * itself (local mode): a command running here is killed at once. Absent: the cancel
   * is recorded in the database and the command's worker, wherever it is, sees it at
   * its next lease heartbeat.
   */
  cancelCommand?: (commandId: string) => Promise<Command | null>;
  /**
   * Stops the calls this node has running on a user's worker hosts when the user turns
   * a kill switch on (the agent node's `workerCalls`). The route also announces the
   * switch through the store, which reaches the other agent nodes sharing the
   * database; this hook is how the node serving the route stops its own calls at once,
   * and the only way on PGlite. Absent: a node that takes no worker hosts.
   */
  workerCalls?: {
    stopForKillSwitch(userId: string, workerId: string | null): number;
  };
}

/** What a route handler gets. */
export interface RouteContext {
  readonly deps: ApiDeps;
  readonly caller: Caller;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The path parameters, in order. */
  readonly params: readonly string[];
  readonly query: URLSearchParams;
  readonly log: Logger;
}

/** A route handler. */
export type RouteHandler = (ctx: RouteContext) => Promise<void>;
