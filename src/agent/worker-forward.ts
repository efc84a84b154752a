/**
 * Worker hosts across agent replicas. The replicas are peers: a worker host connected
 * to any one of them serves calls that arrive at any other, and the consent gate is
 * decided once, where the call arrived (`worker-reroute.ts`).
 *
 * - Each agent records, on the worker's row, which node holds its stream and where
 *   peers reach that node (`MEMQL_GRPC_ADVERTISE`), and vouches for the streams it
 *   holds every few seconds ({@link vouchForWorkerLinks}), so a replica that died
 *   without recording the disconnection stops being named within seconds.
 * - The arriving agent's gate counts such a worker as connected
 *   ({@link WorkerLinksAcrossAgents.reachable}); once it lets the call run, the call
 *   goes down the worker's stream if it is held here, else to the holding replica as
 *   `worker.forward` over `NodeService.Stream`, presenting the mesh token
 *   ({@link WorkerLinksAcrossAgents.send}). Output, cancels (the kill switch's too)
 *   and the answer cross both hops as they cross one.
 * - The holding replica serves `worker.forward` only on a stream that presented the
 *   mesh token ({@link forwardedWorkerCalls}), never on a worker's or a caller's
 *   token, and evaluates no gate of its own: the caller's consent was decided on the
 *   arriving agent, and nothing on this path can grant it.
 *
 * A forwarded call that cannot reach the worker answers as a local one would: nothing
 * sent (`worker_unavailable`) or lost on the way (`unavailable`, the routing record
 * `lost`), whether the worker or the holding replica went away.
 *
 * @module
 */

import { isUserSubject, USER_SUBJECT_PREFIX } from '../contract/index.js';
import {
  type AgentPeers,
  type HandlerAnswer,
  type PeerConnection,
  type PeerRequestOptions,
  PeerUnavailableError,
  type RequestHandler,
  type ResponseFrame,
  type WireAuthority,
  WORKER_DISPATCH_METHOD,
  WORKER_FORWARD_METHOD,
  type WorkerHub,
} from '../mesh/index.js';
import {
  type Db,
  getWorkerHost,
  touchWorkerLinks,
  WORKER_LINK_REFRESH_MS,
  type WorkerHostRecord,
} from '../store/index.js';
import type { Logger } from '../telemetry/index.js';
import type { WorkerLinks } from './worker-reroute.js';

/** Key of a forwarded call's refusal payload saying the worker's stream failed it. */
const LINK_FAILURE = 'workerLink';

/** The body of a `worker.forward` request. */
interface ForwardBody {
  readonly workerId: string;
  /** The `worker.dispatch` payload, base64. */
  readonly payload: string;
}

function readForwardBody(bytes: Buffer): ForwardBody | null {
  try {
    const body = JSON.parse(bytes.toString('utf8')) as Partial<ForwardBody>;
    if (typeof body.workerId !== 'string' || body.workerId === '') return null;
    if (typeof body.payload !== 'string') return null;
    return { workerId: body.workerId, payload: body.payload };
  } catch {
    return null;
  }
}

const refusal = (errorCode: string, message: string, payload?: object): HandlerAnswer => ({
  ok: false,
  errorCode,
  message,
  payload: payload === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(payload)),
});

/**
 * The holding replica's side: serves `worker.forward` from authenticated peer agents
 * by passing the call down the worker's stream held here, as it is.
 */
export function forwardedWorkerCalls(
  hub: Pick<WorkerHub, 'send'>,
  nodeId: string,
  log: Logger,
): RequestHandler {
  return async (request, ctx) => {
    if (!request.authenticated) {
      // The mesh server routes only mesh-token streams here; this holds it regardless.
      return refusal(
        'forbidden',
        'forbidden: forwarded worker calls are taken only from agent replicas that present MEMQL_MESH_TOKEN',
      );
    }
    if (request.method !== WORKER_FORWARD_METHOD) {
      return refusal(
        'invalid_arguments',
        `invalid_arguments: an agent node serves its peers "${WORKER_FORWARD_METHOD}" only, not "${request.method}"`,
      );
    }
    const body = readForwardBody(request.payload);
    const authority = request.authority;
    if (
      body === null ||
      authority === null ||
      authority.class !== 'user' ||
      !isUserSubject(authority.subject)
    ) {
      return refusal(
        'invalid_arguments',
        `invalid_arguments: a "${WORKER_FORWARD_METHOD}" request carries {workerId, payload} and a user authority`,
      );
    }
    const userId = authority.subject.slice(USER_SUBJECT_PREFIX.length);
    log.info(
      { workerId: body.workerId, userId, from: request.peerNodeId },
      'forwarded worker call: passed down the worker stream held here',
    );
    try {
      const response = await hub.send(
        userId,
        body.workerId,
        WORKER_DISPATCH_METHOD,
        authority,
        Buffer.from(body.payload, 'base64'),
        { signal: ctx.signal, onOutput: ctx.output },
      );
      return response.ok
        ? { ok: true, payload: response.payload }
        : {
            ok: false,
            errorCode: response.errorCode,
            message: response.message,
            payload: response.payload,
          };
    } catch (err) {
      if (!(err instanceof PeerUnavailableError)) throw err;
      // Said as data, so the forwarding agent answers exactly as for a stream of its own.
      return refusal(
        err.sent ? 'unavailable' : 'worker_unavailable',
        `${err.sent ? 'unavailable' : 'worker_unavailable'}: worker "${body.workerId}" on agent node "${nodeId}": ${err.message}`,
        { [LINK_FAILURE]: err.sent ? 'lost' : 'absent' },
      );
    }
  };
}

/** What {@link WorkerLinksAcrossAgents} is built from. */
export interface WorkerLinksAcrossAgentsDeps {
  readonly hub: WorkerHub;
  readonly db: Db;
  readonly nodeId: string;
  /** Streams to peer replicas; null: this node forwards nothing (no mesh token). */
  readonly peers: AgentPeers | null;
  readonly log: Logger;
}

/** The arriving agent's side: this node's worker streams, and those its peers hold. */
export class WorkerLinksAcrossAgents implements WorkerLinks {
  constructor(private readonly deps: WorkerLinksAcrossAgentsDeps) {}

  connected(userId: string) {
    return this.deps.hub.connected(userId);
  }

  /** Whether a worker whose stream another replica holds serves calls that arrive here. */
  reachable(host: WorkerHostRecord): boolean {
    return (
      this.deps.peers !== null &&
      host.linkLive &&
      host.agentNodeId !== this.deps.nodeId &&
      host.agentAddress !== null
    );
  }

  /**
   * Sends one call, already let through by the gate here, to a worker of `userId`:
   * down its stream if this node holds it, else to the replica that does (read again
   * now, so a worker that moved since the gate read is found where it is). Throws
   * {@link PeerUnavailableError} as the hub does.
   */
  async send(
    userId: string,
    workerId: string,
    method: string,
    authority: WireAuthority,
    payload: Buffer,
    options: PeerRequestOptions = {},
  ): Promise<ResponseFrame> {
    const { hub, peers, db } = this.deps;
    if (method !== WORKER_DISPATCH_METHOD || peers === null) {
      return hub.send(userId, workerId, method, authority, payload, options);
    }
    // A worker that moved between the holder's read and its stream (it reconnected to
    // another replica, or here) is followed once; nothing was sent the first time.
    let tried: string | null = null;
    for (;;) {
      if (hub.connected(userId).some((w) => w.workerId === workerId)) {
        return hub.send(userId, workerId, method, authority, payload, options);
      }
      const host = await getWorkerHost(db, userId, workerId);
      if (host === null || !this.reachable(host) || host.agentAddress === null) {
        throw new PeerUnavailableError(`worker ${workerId} is not connected`, false);
      }
      const peer = await peers.ready(host.agentAddress);
      const response = await this.forward(peer, host, { userId, authority, payload }, options);
      const failure = linkFailure(response);
      if (failure === null) return response;
      if (failure === 'absent' && tried === null) {
        tried = host.agentNodeId;
        const now = await getWorkerHost(db, userId, workerId);
        if (now !== null && now.agentNodeId !== tried) continue;
      }
      throw new PeerUnavailableError(response.message, failure === 'lost');
    }
  }

  private forward(
    peer: PeerConnection,
    host: WorkerHostRecord,
    call: { readonly userId: string; readonly authority: WireAuthority; readonly payload: Buffer },
    options: PeerRequestOptions,
  ): Promise<ResponseFrame> {
    const { userId, authority, payload } = call;
    const body: ForwardBody = { workerId: host.workerId, payload: payload.toString('base64') };
    this.deps.log.info(
      {
        workerId: host.workerId,
        userId,
        linkNodeId: host.agentNodeId,
        address: host.agentAddress,
      },
      'worker call forwarded to the agent replica holding its stream',
    );
    return peer.request(
      WORKER_FORWARD_METHOD,
      authority,
      Buffer.from(JSON.stringify(body)),
      options,
    );
  }
}

/** Whether a forwarded call's answer says the worker's stream failed it, and how. */
function linkFailure(response: ResponseFrame): 'lost' | 'absent' | null {
  if (response.ok || response.payload.length === 0) return null;
  try {
    const value = (JSON.parse(response.payload.toString('utf8')) as Record<string, unknown>)[
      LINK_FAILURE
    ];
    return value === 'lost' || value === 'absent' ? value : null;
  } catch {
    return null;
  }
}

/**
 * Vouches every {@link WORKER_LINK_REFRESH_MS} for the worker streams this node holds
 * (see the module comment). Returns its stop.
 */
export function vouchForWorkerLinks(
  db: Db,
  hub: Pick<WorkerHub, 'links'>,
  nodeId: string,
  log: Logger,
  everyMs = WORKER_LINK_REFRESH_MS,
): () => void {
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    const links = hub.links().map((l) => ({ ownerUserId: l.userId, workerId: l.workerId }));
    touchWorkerLinks(db, nodeId, links)
      .catch((err: unknown) =>
        log.warn({ err }, 'vouching for the worker streams held here failed'),
      )
      .finally(() => {
        busy = false;
      });
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
