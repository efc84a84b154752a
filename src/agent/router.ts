import type { DispatchResult } from '../contract/index.js';
import type { DispatchCallOptions, PeerRegistry, PeerView, WireAuthority } from '../mesh/index.js';
import {
  PeerUnavailableError,
  resultFromResponse,
  WORKBENCH_DISPATCH_METHOD,
} from '../mesh/index.js';

/**
 * What the dispatcher needs from the mesh: the replicas' state and a way to send a
 * call to one of them. Implemented over a {@link PeerRegistry}; tests may pass their
 * own.
 */
export interface WorkbenchRouter {
  /** Every known replica, as of now. */
  views(): PeerView[];
  /** Resolves at the next change of any replica's state, or after `ms`. */
  waitForChange(ms: number): Promise<void>;
  /**
   * Sends a call to the replica with key `peer`. Throws {@link PeerUnavailableError}
   * when its stream is not up or ends before the answer.
   */
  send(
    peer: string,
    authority: WireAuthority,
    request: Buffer,
    options: DispatchCallOptions,
  ): Promise<DispatchResult>;
}

/** A router over the agent's peer registry. */
export function registryRouter(registry: PeerRegistry): WorkbenchRouter {
  return {
    views: () => registry.views(),
    waitForChange: (ms) => registry.waitForChange(ms),
    async send(peer, authority, request, options) {
      const connection = registry.connection(peer);
      if (!connection) throw new PeerUnavailableError(`peer ${peer} is no longer known`, false);
      const response = await connection.request(WORKBENCH_DISPATCH_METHOD, authority, request, {
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onOutput ? { onOutput: options.onOutput } : {}),
      });
      return resultFromResponse(response);
    },
  };
}
