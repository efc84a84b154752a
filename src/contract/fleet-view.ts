/**
 * The workbench fleet as JSON (`GET /v1/fleet/workbenches`): how the agent node
 * dispatches, each replica it knows with its load and whether it can build, and the
 * caller's own worker hosts. The API answers with these, its readiness probe reads the
 * replicas, and the client reads the answer; they are defined here once.
 *
 * @module
 */

import type { BuildTool, ToolchainProblem } from './build-toolchain.js';
import type { WorkerView } from './worker-views.js';

/**
 * Whether a replica can run a `build`, and if not, what it lacks: what its sandbox
 * toolchain probe found, as its Health frames report it.
 */
export interface FleetBuildState {
  readonly canBuild: boolean;
  /** The build tools it has not shown it can run (every one when it has no report). */
  readonly missing: readonly BuildTool[];
  /** Why it cannot build; null when it can. */
  readonly problem: ToolchainProblem | null;
  /** Why its probe failed, when it did. */
  readonly detail?: string;
}

/** One workbench replica. */
export interface FleetReplica {
  /** Its `MEMQL_NODE_ID`; null before its hello. */
  readonly nodeId: string | null;
  /** Where the agent reaches it (`host:port`), or `in-process`. */
  readonly address: string;
  readonly healthy: boolean;
  /** Commands running there. */
  readonly running: number;
  /** Commands waiting. */
  readonly queued: number;
  /** Commands it runs at once. */
  readonly capacity: number;
  /** ISO time its current connection came up; null while not connected. */
  readonly connectedSince: string | null;
  /** Whether it can run a `build`, and what it lacks. */
  readonly build: FleetBuildState;
}

/** The replicas an agent node dispatches to, and how (in process, or over the mesh). */
export interface ReplicaFleet {
  readonly mode: 'local' | 'remote';
  readonly replicas: readonly FleetReplica[];
}

/** `GET /v1/fleet/workbenches`: the replicas, and beside them the caller's worker hosts. */
export interface FleetView extends ReplicaFleet {
  /** The caller's own worker hosts (never anyone else's), as `GET /v1/workers` lists them. */
  readonly workers: readonly WorkerView[];
}
