/**
 * The workbench replicas as the API and console show them (`GET
 * /v1/fleet/workbenches`, in the contract's shapes): in local mode the one in-process
 * host, in remote mode every replica the agent's peer registry knows.
 *
 * @module
 */

import {
  canBuild,
  type FleetBuildState,
  type FleetReplica,
  type ReplicaFleet,
  replicaBuildState,
  type Toolchain,
} from '../contract/index.js';
import type { FleetPeerView } from '../mesh/index.js';

export type { FleetBuildState, FleetReplica, ReplicaFleet };

/** The fleet view of a replica's toolchain (null or absent: not reported). */
export function fleetBuildState(
  nodeId: string | null,
  toolchain?: Toolchain | null,
): FleetBuildState {
  if (canBuild(toolchain)) return { canBuild: true, missing: [], problem: null };
  const state = replicaBuildState(nodeId, toolchain);
  return {
    canBuild: false,
    missing: [...state.missing],
    problem: state.problem,
    ...(toolchain?.status === 'probe_failed' ? { detail: toolchain.reason } : {}),
  };
}

/** Where the API reads the fleet from. */
export type FleetSource = () => Promise<ReplicaFleet>;

/** What {@link localFleet} reads from the in-process host. */
export interface LocalFleetDeps {
  nodeId: string;
  /** `MEMQL_COMMAND_CONCURRENCY`. */
  capacity: number;
  /** When the host started serving. */
  since: Date;
  /** Whether its command worker is running. */
  healthy: () => boolean;
  /** Commands running on this node. */
  running: () => number;
  /** Commands queued (the whole queue: in local mode there is one node). */
  queued: () => Promise<number>;
  /** What its sandbox can run for a build; null until its probe has ended. */
  toolchain: () => Toolchain | null;
}

/** The fleet of a local node: its own in-process workbench. */
export function localFleet(deps: LocalFleetDeps): FleetSource {
  return async () => ({
    mode: 'local',
    replicas: [
      {
        nodeId: deps.nodeId,
        address: 'in-process',
        healthy: deps.healthy(),
        running: deps.running(),
        queued: await deps.queued(),
        capacity: deps.capacity,
        connectedSince: deps.since.toISOString(),
        build: fleetBuildState(deps.nodeId, deps.toolchain()),
      },
    ],
  });
}

/** The fleet of a remote-mode agent: what its registry sees (nothing when none is wired). */
export function remoteFleet(registry: { fleetViews(): FleetPeerView[] } | null): FleetSource {
  return async () => ({
    mode: 'remote',
    replicas: (registry?.fleetViews() ?? []).map((v) => ({
      nodeId: v.nodeId,
      address: v.key,
      healthy: v.healthy,
      running: v.running,
      queued: v.queued,
      capacity: v.capacity,
      connectedSince: v.connectedSince === null ? null : new Date(v.connectedSince).toISOString(),
      build: fleetBuildState(v.nodeId, v.toolchain),
    })),
  });
}
