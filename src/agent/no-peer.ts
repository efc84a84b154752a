import { type DispatchFailure, errorResult } from '../contract/index.js';

/** What a `no_workbench_peer` message reports. */
export interface NoPeerContext {
  /** The node type that was wanted, `workbench`. */
  readonly peerType: string;
  /** `MEMQL_WORKER_PEERS` as set. */
  readonly peersRaw: string;
  /** Replicas known behind the seeds. */
  readonly known: number;
  /** Why there is no router at all, when none could be wired. */
  readonly unwired?: string;
}

/**
 * The refusal of a remote call with no healthy peer. It names what is missing, the
 * setting that names peers, and the one setting that allows local execution, so
 * whoever reads it can fix the deployment without reading code.
 */
export function noWorkbenchPeer(ctx: NoPeerContext): DispatchFailure {
  const peers = ctx.peersRaw === '' ? '(empty)' : ctx.peersRaw;
  const state =
    ctx.unwired ??
    `${ctx.known} ${ctx.peerType} replica${ctx.known === 1 ? '' : 's'} known, none healthy and connected`;
  return errorResult(
    'no_workbench_peer',
    `no_workbench_peer: no healthy "${ctx.peerType}" peer is reachable (${state}); ` +
      `MEMQL_WORKER_PEERS=${peers}. The call was refused, not run on this node. ` +
      `Check that a ${ctx.peerType} node is running, that MEMQL_WORKER_PEERS names it ` +
      `(e.g. ${ctx.peerType}=${ctx.peerType}:50060) and that it reports healthy; ` +
      'set MEMQL_WORKBENCH_LOCAL_FALLBACK=1 only if running such calls on this node is acceptable.',
    { peerType: ctx.peerType, workerPeers: ctx.peersRaw },
  );
}
