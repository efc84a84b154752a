/**
 * Which replica serves a call. Pure: a function of the peers' state and the run's
 * affinity (and, for a build, what each replica's sandbox can run), tested without
 * servers.
 *
 * @module
 */

import { canBuild, type Toolchain } from '../contract/index.js';

/** What the picker knows about one replica. */
export interface PeerView {
  /** Stable key of the replica's stream: its address and port. */
  readonly key: string;
  /** The `MEMQL_NODE_ID` it said hello with; `null` before its hello. */
  readonly nodeId: string | null;
  /** Its stream is up and it has said hello. */
  readonly connected: boolean;
  /** Connected, and its last Health frame is fresh and says healthy. */
  readonly healthy: boolean;
  /** Calls running there, from its last Health frame. */
  readonly running: number;
  /** Calls waiting there. */
  readonly queued: number;
  /** Calls it runs at once. */
  readonly capacity: number;
  /**
   * What its sandbox can run for a build, from its last Health frame; absent while it
   * has not reported one (still probing, or an older version): cannot build.
   */
  readonly toolchain?: Toolchain;
}

/** What a call needs of the replica that serves it. */
export interface PickNeeds {
  /** A `build`: only a replica that reported every build tool may serve it. */
  readonly build?: boolean;
}

/** The outcome of {@link pickPeer}. */
export type PeerPick =
  /** The run's replica is healthy and connected: the call goes there. */
  | { readonly kind: 'pinned'; readonly peer: PeerView }
  /**
   * The run's replica is not available (`unavailable`), or cannot serve this call
   * (`cannot_build`); another takes the workspace over.
   */
  | {
      readonly kind: 'substitute';
      readonly peer: PeerView;
      readonly preferredNodeId: string;
      readonly reason: 'unavailable' | 'cannot_build';
    }
  /** The run has no replica yet (or its affinity is unknown): the least-loaded one. */
  | { readonly kind: 'unpinned'; readonly peer: PeerView }
  /** No healthy peer at all. */
  | { readonly kind: 'none' }
  /** Healthy peers, but none can serve this call (a build): these are they. */
  | { readonly kind: 'incapable'; readonly peers: readonly PeerView[] };

/** Load as a fraction of capacity; a node reporting no capacity counts its calls whole. */
function loadOf(peer: PeerView): number {
  return (peer.running + peer.queued) / Math.max(peer.capacity, 1);
}

function lessLoaded(a: PeerView, b: PeerView): number {
  return (
    loadOf(a) - loadOf(b) ||
    a.running + a.queued - (b.running + b.queued) ||
    (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
  );
}

/**
 * Picks the replica for a call. The run's live workspace row names
 * `preferredNodeId`: that replica wins whenever it is healthy and connected, because
 * the run's files are warm there. Otherwise the least-loaded healthy replica (load
 * relative to capacity, then absolute, then by key so equal peers pick alike).
 *
 * A build considers only the replicas that can build: the run's replica when it can,
 * else a capable one, which takes the workspace over. Healthy replicas none of which
 * can build are `incapable`, never a pick.
 *
 * @param peers - every known replica, healthy or not.
 * @param preferredNodeId - the node of the run's live workspace; `null` when there is
 *   none or it could not be read.
 * @param needs - what the call needs of its replica.
 */
export function pickPeer(
  peers: readonly PeerView[],
  preferredNodeId: string | null,
  needs: PickNeeds = {},
): PeerPick {
  const healthy = peers.filter((p) => p.healthy && p.connected);
  const able = needs.build ? healthy.filter((p) => canBuild(p.toolchain)) : healthy;
  if (able.length === 0 && healthy.length > 0) return { kind: 'incapable', peers: healthy };
  if (preferredNodeId !== null) {
    const pinned = able.filter((p) => p.nodeId === preferredNodeId).sort(lessLoaded)[0];
    if (pinned) return { kind: 'pinned', peer: pinned };
  }
  const best = [...able].sort(lessLoaded)[0];
  if (!best) return { kind: 'none' };
  if (preferredNodeId === null) return { kind: 'unpinned', peer: best };
  const holderServes = healthy.some((p) => p.nodeId === preferredNodeId);
  return {
    kind: 'substitute',
    peer: best,
    preferredNodeId,
    reason: holderServes ? 'cannot_build' : 'unavailable',
  };
}
