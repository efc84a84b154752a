/**
 * `dispatchHost`: the agent side of the dispatch pipeline (docs/ARCHITECTURE.md,
 * "One call, in order"). In order, before anything runs or is forwarded:
 *
 * 1. parse the envelope (`invalid_arguments`, and `invalid_environment_hint` for a
 *    malformed hint), once: {@link AgentDispatcher.dispatchHost} parses raw input,
 *    {@link AgentDispatcher.dispatch} takes an envelope its caller (the HTTP API)
 *    already parsed;
 * 2. admit it (`admitEnvelope`): the typed environment hint (`environment_mismatch`),
 *    then the build gate: `build` without a system-class authority is refused by name,
 *    never forwarded (`build_not_permitted`);
 * 4. route: not remote, the in-process workbench; remote, the run's replica when it
 *    is healthy and connected, else the least-loaded healthy one. No healthy replica
 *    is `no_workbench_peer`, unless `MEMQL_WORKBENCH_LOCAL_FALLBACK=1` explicitly
 *    allows running the call here. Never a silent local run. A `build` goes only to a
 *    replica that reported every build tool in its Health frames (the run's replica
 *    when it can, else a capable one, which takes the workspace over); healthy
 *    replicas none of which can build answer `build_unavailable`, naming what each
 *    lacks, and nothing is forwarded.
 *
 * @module
 */

import {
  type Authority,
  admitEnvelope,
  buildUnavailable,
  type DispatchFailure,
  type DispatchResult,
  type Envelope,
  envelopeToWire,
  errorResult,
  NODE_DRAINING,
  parseEnvelope,
  refusedBeforeRunning,
  replicaBuildState,
} from '../contract/index.js';
import type { DispatchCallOptions, DispatchTarget, WireAuthority } from '../mesh/index.js';
import {
  authorityToWire,
  type PeerPick,
  PeerUnavailableError,
  type PeerView,
  type PickNeeds,
  pickPeer,
} from '../mesh/index.js';
import type { Logger } from '../telemetry/index.js';
import { noWorkbenchPeer } from './no-peer.js';
import type { WorkbenchRouter } from './router.js';
import { RunHolders } from './run-holders.js';
import type { WorkerReroute } from './worker-reroute.js';

/** How long a remote call waits for some replica to become healthy before refusing, ms. */
export const PEER_WAIT_MS = 2_000;

/** Replicas tried for one call when a stream turns out to be down before the call was sent. */
const MAX_SEND_ATTEMPTS = 3;

/** Options of {@link AgentDispatcher}. */
export interface AgentDispatcherOptions {
  /** `MEMQL_WORKBENCH_REMOTE`. */
  readonly remote: boolean;
  /** `MEMQL_WORKBENCH_LOCAL_FALLBACK`. */
  readonly localFallback: boolean;
  /** The in-process workbench; needed when not remote, or with the fallback. */
  readonly local: DispatchTarget | null;
  /** The mesh; `null` when remote but no router could be wired (every call then refuses). */
  readonly router: WorkbenchRouter | null;
  /** Why the router is missing, quoted in refusals. */
  readonly unwiredReason?: string;
  /**
   * The node of the run's live workspace row (`getLiveWorkspace(db, runId)?.nodeId`),
   * `null` when there is none. A throw degrades to an unpinned pick with a WARNING.
   */
  readonly readAffinity: (runId: string) => Promise<string | null>;
  /** `MEMQL_WORKER_PEERS` as set, quoted in `no_workbench_peer`. */
  readonly peersRaw: string;
  /** The node type routed to. Default `workbench`. */
  readonly peerType?: string;
  readonly log: Logger;
  /** Default {@link PEER_WAIT_MS}. */
  readonly peerWaitMs?: number;
  /**
   * Sends calls the workbench cannot serve (`environment_mismatch`) to the caller's
   * worker hosts, through the consent gate. Absent: the mismatch is the answer.
   */
  readonly reroute?: WorkerReroute;
}

/** Where a call went. */
export type Route =
  /** Refused before routing (contract, hint, authority, or no peer). */
  | { readonly kind: 'refused' }
  /** Ran in-process: not remote, or remote with the explicit fallback. */
  | { readonly kind: 'local'; readonly reason: 'not_remote' | 'fallback' }
  /** Forwarded to a replica. */
  | {
      readonly kind: 'remote';
      readonly peer: string;
      readonly nodeId: string | null;
      /** `pinned`: the run's replica; `substitute`: another took over; `unpinned`: no affinity. */
      readonly pick: 'pinned' | 'substitute' | 'unpinned';
      /** The run's previous replica, on a substitute pick. */
      readonly previousNodeId?: string;
    }
  /** Sent to a worker host of the caller's (the workbench could not serve it). */
  | { readonly kind: 'worker'; readonly workerId: string };

/** A result and the route that produced it. */
export interface DispatchOutcome {
  readonly result: DispatchResult;
  readonly route: Route;
}

const REFUSED: Route = { kind: 'refused' };

/** The agent side of every `workbenchHost` call. */
export class AgentDispatcher {
  private readonly peerType: string;
  /** The replica that served each run last: the next call's pin, without a read. */
  private readonly holders = new RunHolders();

  constructor(private readonly options: AgentDispatcherOptions) {
    this.peerType = options.peerType ?? 'workbench';
  }

  /**
   * One `workbenchHost` call as a tool loop makes it, unparsed: the tool's answer. The
   * envelope is parsed here, once for this process.
   */
  async dispatchHost(
    request: unknown,
    authority: Authority,
    options: DispatchCallOptions = {},
  ): Promise<DispatchResult> {
    const parsed = parseEnvelope(request);
    if (!parsed.ok) return parsed;
    return (await this.dispatch(parsed.envelope, authority, options)).result;
  }

  /**
   * One parsed `workbenchHost` call, with the route it took (for logs, tests, the
   * console).
   */
  async dispatch(
    envelope: Envelope,
    authority: Authority,
    options: DispatchCallOptions = {},
  ): Promise<DispatchOutcome> {
    const refused = admitEnvelope(envelope, authority);
    if (refused) {
      const reroute = this.options.reroute;
      if (refused.errorCode === 'environment_mismatch' && reroute === undefined) {
        return { result: withoutWorkerHosts(refused), route: REFUSED };
      }
      if (refused.errorCode !== 'environment_mismatch' || reroute === undefined) {
        return { result: refused, route: REFUSED };
      }
      const outcome = await reroute.reroute(envelope, authority, refused, options);
      return {
        result: outcome.result,
        route: outcome.workerId === null ? REFUSED : { kind: 'worker', workerId: outcome.workerId },
      };
    }
    const wire = authorityToWire(authority);
    if (wire === null) {
      return {
        result: errorResult(
          'forbidden',
          'forbidden: the authority claims the system class but was not minted by node code',
        ),
        route: REFUSED,
      };
    }
    const log = this.options.log.child({
      runId: envelope.runId,
      action: envelope.action,
      ...(envelope.callId ? { callId: envelope.callId } : {}),
    });
    if (!this.options.remote) return this.runLocal(envelope, authority, options, 'not_remote', log);
    return this.runRemote(envelope, authority, wire, options, log);
  }

  private async runLocal(
    envelope: Envelope,
    authority: Authority,
    options: DispatchCallOptions,
    reason: 'not_remote' | 'fallback',
    log: Logger,
  ): Promise<DispatchOutcome> {
    const local = this.options.local;
    if (local === null) {
      log.error('no in-process workbench is wired on this node');
      return {
        result: errorResult('internal', 'internal: internal error; see node logs'),
        route: REFUSED,
      };
    }
    const result = await local.handleDispatch(envelope, authority, options);
    return { result, route: { kind: 'local', reason } };
  }

  private refuseOrFallBack(
    envelope: Envelope,
    authority: Authority,
    options: DispatchCallOptions,
    known: number,
    log: Logger,
  ): Promise<DispatchOutcome> | DispatchOutcome {
    if (this.options.localFallback) {
      log.warn(
        { peerType: this.peerType, known },
        'no healthy workbench peer: running the call on this node because MEMQL_WORKBENCH_LOCAL_FALLBACK=1',
      );
      return this.runLocal(envelope, authority, options, 'fallback', log);
    }
    log.warn({ peerType: this.peerType, known }, 'no healthy workbench peer: call refused');
    return {
      result: noWorkbenchPeer({
        peerType: this.peerType,
        peersRaw: this.options.peersRaw,
        known,
        ...(this.options.router === null
          ? { unwired: this.options.unwiredReason ?? 'no router is wired on this node' }
          : {}),
      }),
      route: REFUSED,
    };
  }

  private async readAffinity(runId: string, log: Logger): Promise<string | null> {
    try {
      return await this.options.readAffinity(runId);
    } catch (err) {
      log.warn(
        { err: (err as Error).message },
        'affinity read failed: picking a replica without the run pin',
      );
      return null;
    }
  }

  /**
   * The run's pin: the replica that served its last call here while that one is
   * healthy (see `run-holders.ts`), else the node its workspace row names.
   */
  private async pinOf(router: WorkbenchRouter, runId: string, log: Logger): Promise<string | null> {
    const last = this.holders.get(runId);
    const live = (p: PeerView) => p.nodeId === last && p.healthy && p.connected;
    if (last !== undefined && router.views().some(live)) return last;
    return this.readAffinity(runId, log);
  }

  private async runRemote(
    envelope: Envelope,
    authority: Authority,
    wire: WireAuthority,
    options: DispatchCallOptions,
    log: Logger,
  ): Promise<DispatchOutcome> {
    const router = this.options.router;
    if (router === null) return this.refuseOrFallBack(envelope, authority, options, 0, log);
    const runId = envelope.runId;
    let preferred = await this.pinOf(router, runId, log);
    let payload: Buffer;
    try {
      payload = Buffer.from(JSON.stringify(envelopeToWire(envelope)), 'utf8');
    } catch {
      return {
        result: errorResult(
          'invalid_arguments',
          'invalid_arguments: the call is not JSON-serialisable',
        ),
        route: REFUSED,
      };
    }
    const excluded = new Set<string>();
    const needs: PickNeeds = { build: envelope.action === 'build' };
    for (let attempt = 0; attempt < MAX_SEND_ATTEMPTS; attempt++) {
      const pick = await this.pick(router, preferred, excluded, needs);
      if (pick.kind === 'none') {
        return this.refuseOrFallBack(envelope, authority, options, router.views().length, log);
      }
      if (pick.kind === 'incapable') {
        const replicas = pick.peers.map((p) => replicaBuildState(p.nodeId, p.toolchain));
        log.warn({ replicas }, 'no healthy replica can build: call refused');
        return { result: buildUnavailable(replicas), route: REFUSED };
      }
      const peer = pick.peer;
      const route: Route = {
        kind: 'remote',
        peer: peer.key,
        nodeId: peer.nodeId,
        pick: pick.kind,
        ...(pick.kind === 'substitute' ? { previousNodeId: pick.preferredNodeId } : {}),
      };
      if (pick.kind === 'substitute') {
        log.warn(
          { runId, previousNodeId: pick.preferredNodeId, nodeId: peer.nodeId, peer: peer.key },
          pick.reason === 'cannot_build'
            ? "the run's replica cannot build: a capable replica takes its workspace over"
            : "the run's replica is gone: another replica takes its workspace over",
        );
      }
      try {
        const result = await router.send(peer.key, wire, payload, options);
        if (!result.ok && refusedBeforeRunning(result.errorCode, result.payload)) {
          // Nothing of the call ran there: it goes to the run's holder (read again), or
          // to another replica when this one drains.
          log.info(
            {
              peer: peer.key,
              nodeId: peer.nodeId,
              reason: (result.payload as { reason: string }).reason,
            },
            'replica refused before running the call; picking again',
          );
          if ((result.payload as { reason: string }).reason === NODE_DRAINING)
            excluded.add(peer.key);
          this.holders.forget(runId);
          preferred = await this.readAffinity(runId, log);
          continue;
        }
        if (peer.nodeId !== null) this.holders.served(runId, peer.nodeId);
        return { result, route };
      } catch (err) {
        if (!(err instanceof PeerUnavailableError)) throw err;
        this.holders.forget(runId);
        if (!err.sent) {
          log.info(
            { peer: peer.key, reason: err.message },
            'replica went away before the call was sent; picking again',
          );
          excluded.add(peer.key);
          continue;
        }
        log.warn(
          { peer: peer.key, nodeId: peer.nodeId, reason: err.message },
          'replica went away during the call',
        );
        return {
          result: errorResult(
            'unavailable',
            `unavailable: workbench replica ${peer.nodeId ?? peer.key} went away while running the call; whether it took effect is unknown. Repeat the call with the same callId to get its recorded outcome (a command lost with the replica answers command_lost), or find it with GET /v1/runs/${runId}/commands`,
          ),
          route,
        };
      }
    }
    return this.refuseOrFallBack(envelope, authority, options, router.views().length, log);
  }

  /**
   * Picks a replica, waiting (bounded) for one to become healthy when none is, and for
   * a build, for a replica that has not reported its toolchain yet (its probe may
   * still run) to report it.
   */
  private async pick(
    router: WorkbenchRouter,
    preferred: string | null,
    excluded: ReadonlySet<string>,
    needs: PickNeeds,
  ): Promise<PeerPick> {
    const candidates = (): PeerView[] => router.views().filter((p) => !excluded.has(p.key));
    let pick = pickPeer(candidates(), preferred, needs);
    const deadline = Date.now() + (this.options.peerWaitMs ?? PEER_WAIT_MS);
    while (worthWaiting(pick) && Date.now() < deadline) {
      await router.waitForChange(deadline - Date.now());
      pick = pickPeer(candidates(), preferred, needs);
    }
    return pick;
  }
}

/** Whether a pick may change by waiting: no healthy replica yet, or one still probing. */
function worthWaiting(pick: PeerPick): boolean {
  return (
    pick.kind === 'none' ||
    (pick.kind === 'incapable' && pick.peers.some((p) => p.toolchain === undefined))
  );
}

/**
 * A mismatch on a node that takes no worker hosts says where such a call would run, and
 * how an operator lets it: the payload is the mismatch's own.
 */
function withoutWorkerHosts(refused: DispatchFailure): DispatchFailure {
  return errorResult(
    'environment_mismatch',
    `${refused.message}. A call like this runs on a worker host of its user's (\`memql worker\` on the machine that has what it needs), and this agent node takes none: it takes them when it serves gRPC (MEMQL_GRPC_LISTEN; for npm start, set it before starting), see docs/workers.md`,
    refused.payload,
  );
}
