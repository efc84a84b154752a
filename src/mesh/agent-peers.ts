/**
 * An agent node's streams to its peer agent replicas, dialled on demand: when a call
 * arrives for a worker host connected to another replica, the agent forwards it down
 * `NodeService.Stream` to that replica's advertised address, presenting the mesh
 * token (the replica serves forwarded calls only to a peer that presented it). A
 * stream is kept while it is up and reused by later calls; one that ends is closed
 * rather than redialled forever (the replica may be gone for good: its pod replaced),
 * and the next call to that address dials it anew.
 *
 * @module
 */

import type { MeshTlsConfig } from '../config/index.js';
import { parseHostPort } from '../config/index.js';
import type { Logger } from '../telemetry/index.js';
import { nextChange } from './change-wait.js';
import type { HelloFrame } from './frames.js';
import { PeerConnection } from './peer-connection.js';
import { PeerUnavailableError } from './stream-caller.js';

/** How long a call waits for a stream to a peer replica to come up, ms. */
export const AGENT_PEER_CONNECT_MS = 5_000;

/** Options of {@link AgentPeers}. */
export interface AgentPeersOptions {
  /** What this node says in hello. */
  readonly self: Omit<HelloFrame, 'kind'>;
  /** `MEMQL_MESH_TOKEN`, presented to every peer. */
  readonly token: string;
  readonly tls: MeshTlsConfig | null;
  readonly log: Logger;
  /** Bound of {@link AgentPeers.ready}, ms. Default {@link AGENT_PEER_CONNECT_MS}. */
  readonly connectMs?: number;
}

/** Streams to peer agent replicas by address, dialled when first needed. */
export class AgentPeers {
  private readonly byAddress = new Map<string, PeerConnection>();
  private readonly waiters = new Set<() => void>();
  private closed = false;

  constructor(private readonly options: AgentPeersOptions) {}

  /**
   * The stream to the replica at `address` (`host:port`), once it is up. Rejects with
   * {@link PeerUnavailableError} (nothing sent) when it cannot be had within the bound,
   * or the dial fails.
   */
  async ready(address: string): Promise<PeerConnection> {
    if (this.closed) throw new PeerUnavailableError('the agent node is stopping', false);
    const peer = this.byAddress.get(address) ?? this.dial(address);
    const deadline = Date.now() + (this.options.connectMs ?? AGENT_PEER_CONNECT_MS);
    for (;;) {
      const state = peer.currentState;
      if (state === 'ready') return peer;
      const left = deadline - Date.now();
      if (state === 'closed' || state === 'backoff' || left <= 0) {
        throw new PeerUnavailableError(
          `the agent replica at ${address} holding the worker's stream cannot be reached`,
          false,
        );
      }
      await nextChange(this.waiters, left);
    }
  }

  /** Ends every stream; later calls are refused. */
  close(): void {
    this.closed = true;
    for (const peer of this.byAddress.values()) peer.close();
    this.byAddress.clear();
    this.wake();
  }

  private dial(address: string): PeerConnection {
    const parsed = parseHostPort(address);
    if (!parsed.ok) {
      throw new PeerUnavailableError(
        `the agent replica's recorded address ${JSON.stringify(address)} is not host:port`,
        false,
      );
    }
    const { host, port } = parsed.value;
    const peer: PeerConnection = new PeerConnection({
      endpoint: { host, port, serverName: host },
      self: this.options.self,
      token: this.options.token,
      tls: this.options.tls,
      log: this.options.log.child({ component: 'agent-peers' }),
      onChange: () => {
        if (peer.currentState === 'backoff' && this.byAddress.get(address) === peer) {
          // Not redialled: the next call dials anew (the replica may be gone for good).
          this.byAddress.delete(address);
          queueMicrotask(() => peer.close());
        }
        this.wake();
      },
    });
    this.byAddress.set(address, peer);
    peer.start();
    return peer;
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
