/**
 * Which replica serves a call. Pure: a function of the peers' state and the run's
 * affinity, tested without servers.
 *
 * @module
 */

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
}

/** The outcome of {@link pickPeer}. */
export type PeerPick =
  /** The run's replica is healthy and connected: the call goes there. */
  | { readonly kind: 'pinned'; readonly peer: PeerView }
  /** The run's replica is not available; another takes the workspace over. */
  | { readonly kind: 'substitute'; readonly peer: PeerView; readonly preferredNodeId: string }
  /** The run has no replica yet (or its affinity is unknown): the least-loaded one. */
  | { readonly kind: 'unpinned'; readonly peer: PeerView }
  /** No healthy peer at all. */
  | { readonly kind: 'none' };

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
 * @param peers - every known replica, healthy or not.
 * @param preferredNodeId - the node of the run's live workspace; `null` when there is
 *   none or it could not be read.
 */
export function pickPeer(peers: readonly PeerView[], preferredNodeId: string | null): PeerPick {
  const healthy = peers.filter((p) => p.healthy && p.connected);
  if (preferredNodeId !== null) {
    const pinned = healthy.filter((p) => p.nodeId === preferredNodeId).sort(lessLoaded)[0];
    if (pinned) return { kind: 'pinned', peer: pinned };
  }
  const best = [...healthy].sort(lessLoaded)[0];
  if (!best) return { kind: 'none' };
  return preferredNodeId === null
    ? { kind: 'unpinned', peer: best }
    : { kind: 'substitute', peer: best, preferredNodeId };
}
