/**
 * Worker hosts as an agent node holds them: the streams `memql worker` processes open
 * to this node's `NodeService.Stream`, each authenticated by an API token of the user
 * who owns the worker, with the worker's offer from its hello. Calls go to a worker
 * down the stream it opened ({@link WorkerHub.send}); a worker is only ever found
 * under its owner's user id, so no call can reach another user's machine.
 *
 * A link's lifecycle ({@link WORKER_LINK_LIFECYCLE}, one log line per move):
 * `authenticating` (token being checked) -> `awaiting_hello` -> `ready` (the worker
 * said hello with its offer) -> `closed`. A worker that connects again under the same
 * id replaces its older link, which is closed.
 *
 * @module
 */

import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { WorkerOffer } from '../contract/index.js';
import type { Logger } from '../telemetry/index.js';
import { defineStateMachine, StateMachine } from '../telemetry/index.js';
import { FrameWriter } from './frame-writer.js';
import { decodeFrame, type HelloFrame, type ResponseFrame, type WireAuthority } from './frames.js';
import { HEALTH_STALE_MS } from './limits.js';
import { MESH_TOKEN_METADATA_KEY } from './mesh-auth.js';
import { type PeerRequestOptions, PeerUnavailableError, StreamCaller } from './stream-caller.js';
import { streamRefusal } from './wire-errors.js';

/** The state of one worker's stream. */
export type WorkerLinkState = 'authenticating' | 'awaiting_hello' | 'ready' | 'closed';

/** A worker link's lifecycle, logged as `worker-link`. */
export const WORKER_LINK_LIFECYCLE = defineStateMachine<WorkerLinkState>(
  'worker-link',
  'authenticating',
  {
    authenticating: ['awaiting_hello', 'closed'],
    awaiting_hello: ['ready', 'closed'],
    ready: ['closed'],
    closed: [],
  },
);

/** A connected worker as callers see it. */
export interface LiveWorker {
  readonly workerId: string;
  readonly os: string;
  readonly provides: readonly string[];
  readonly capacity: number;
  /** Calls sent to it and not answered yet. */
  readonly inFlight: number;
  readonly version: string;
  readonly connectedAt: Date;
}

/** A worker link's identity, for the hooks. */
export interface WorkerLinkInfo {
  readonly userId: string;
  readonly workerId: string;
  readonly offer: WorkerOffer;
  readonly version: string;
  readonly connectedAt: Date;
}

/** Options of {@link WorkerHub}. */
export interface WorkerHubOptions {
  /** What this node says in its hello. */
  readonly self: Omit<HelloFrame, 'kind'>;
  /**
   * The user a bearer token belongs to, null (unknown or revoked), or a refusal of a
   * live token that may not serve as a worker's (its message says which to use).
   */
  authenticate(token: string): Promise<string | null | { readonly refused: string }>;
  /** After a worker said hello (recorded in the store by the agent). */
  readonly onConnected?: (link: WorkerLinkInfo) => void;
  /** After a ready worker's stream ended. */
  readonly onDisconnected?: (link: WorkerLinkInfo) => void;
  readonly log: Logger;
  /** A worker silent this long is not offered to calls, ms. Default {@link HEALTH_STALE_MS}. */
  readonly staleMs?: number;
  /** Clock, ms. Default `Date.now`. */
  readonly now?: () => number;
}

const BEARER = 'Bearer ';

/** One worker's stream. */
class WorkerLink {
  readonly machine: StateMachine<WorkerLinkState>;
  readonly writer: FrameWriter;
  readonly caller: StreamCaller;
  /** The token's user, once checked. */
  userId: string | null = null;
  /** When the worker last sent a frame (it sends Health every second), ms. */
  lastFrameAt = 0;
  info: WorkerLinkInfo | null = null;

  constructor(
    readonly call: ServerDuplexStream<unknown, unknown>,
    log: Logger,
  ) {
    this.machine = new StateMachine(WORKER_LINK_LIFECYCLE, log, { level: 'info' });
    this.writer = new FrameWriter(call);
    this.caller = new StreamCaller(this.writer, `worker at ${call.getPeer()}`);
  }

  view(now: number, staleMs: number): LiveWorker | null {
    const info = this.info;
    if (info === null || this.machine.state !== 'ready') return null;
    // A worker silent for longer than its Health period allows is gone as far as
    // routing is concerned, before keepalive ends its stream.
    if (now - this.lastFrameAt > staleMs) return null;
    return {
      workerId: info.workerId,
      os: info.offer.os,
      provides: [...info.offer.provides],
      capacity: info.offer.capacity,
      inFlight: this.caller.inFlight,
      version: info.version,
      connectedAt: info.connectedAt,
    };
  }
}

/** The worker hosts connected to this agent node. */
export class WorkerHub {
  /** Ready links by user id, then worker id. */
  private readonly byUser = new Map<string, Map<string, WorkerLink>>();
  private readonly links = new Set<WorkerLink>();
  private readonly waiters = new Set<() => void>();
  private closed = false;

  constructor(private readonly options: WorkerHubOptions) {}

  /** The `NodeService.Stream` handler for worker streams. */
  readonly accept = (call: ServerDuplexStream<unknown, unknown>): void => {
    const log = this.options.log.child({ component: 'worker-hub', peer: call.getPeer() });
    if (this.closed) {
      call.emit('error', streamRefusal('unavailable', 'unavailable: the node is stopping'));
      return;
    }
    const link = new WorkerLink(call, log);
    this.links.add(link);
    const early: unknown[] = [];
    let authenticated = false;
    call.on('data', (message: unknown) => {
      if (authenticated) this.onMessage(link, message, log);
      else early.push(message);
    });
    const down = (reason: string) => this.drop(link, reason, log);
    call.on('end', () => {
      down('the worker ended the stream');
      call.end();
    });
    call.on('cancelled', () => down('the worker cancelled the stream'));
    call.on('error', (err: Error) => down(`stream error: ${err.message}`));
    call.on('close', () => down('stream closed'));
    const values = call.metadata.get(MESH_TOKEN_METADATA_KEY);
    const value = values.length === 1 ? values[0] : undefined;
    const token =
      typeof value === 'string' && value.startsWith(BEARER) ? value.slice(BEARER.length) : '';
    const refuse = (details: string) => {
      log.warn({ reason: details }, 'worker stream refused');
      call.emit('error', streamRefusal('unauthenticated', details));
      down('refused');
    };
    if (token === '') {
      refuse(
        'unauthenticated: no API token; set MEMQL_WORKER_TOKEN to a token of the user who owns this worker (memql tokens create)',
      );
      return;
    }
    this.options.authenticate(token).then(
      (userId) => {
        if (link.machine.state === 'closed') return;
        if (userId === null) {
          refuse(
            'unauthenticated: the API token is unknown or revoked; set MEMQL_WORKER_TOKEN to a live token of the user who owns this worker (memql tokens create)',
          );
          return;
        }
        if (typeof userId !== 'string') {
          refuse(userId.refused);
          return;
        }
        authenticated = true;
        link.machine.moveTo('awaiting_hello', { userId });
        link.userId = userId;
        link.writer.send({ kind: 'hello', ...this.options.self }).catch(() => {});
        for (const message of early.splice(0)) this.onMessage(link, message, log);
      },
      (err: unknown) => {
        log.error({ err }, 'worker token check failed');
        call.emit(
          'error',
          streamRefusal(
            'unavailable',
            'unavailable: the agent could not check the token; the worker retries',
          ),
        );
        down('token check failed');
      },
    );
  };

  /** The ready workers of `userId`, by id. */
  connected(userId: string): LiveWorker[] {
    const views: LiveWorker[] = [];
    const now = (this.options.now ?? Date.now)();
    const staleMs = this.options.staleMs ?? HEALTH_STALE_MS;
    for (const link of this.byUser.get(userId)?.values() ?? []) {
      const view = link.view(now, staleMs);
      if (view) views.push(view);
    }
    return views.sort((a, b) => a.workerId.localeCompare(b.workerId));
  }

  /**
   * Sends one call to a worker of `userId`. Throws {@link PeerUnavailableError} when
   * that worker is not connected here, or its stream ends before the answer.
   */
  send(
    userId: string,
    workerId: string,
    method: string,
    authority: WireAuthority,
    payload: Buffer,
    options: PeerRequestOptions = {},
  ): Promise<ResponseFrame> {
    const link = this.byUser.get(userId)?.get(workerId);
    if (link?.machine.state !== 'ready') {
      return Promise.reject(new PeerUnavailableError(`worker ${workerId} is not connected`, false));
    }
    return link.caller.request(method, authority, payload, options);
  }

  /** Resolves at the next change of any link, or after `ms`. */
  waitForChange(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  /** Ends every worker stream; new ones are refused. */
  close(): void {
    this.closed = true;
    for (const link of [...this.links]) {
      this.drop(link, 'the node is stopping', this.options.log);
      link.call.end();
    }
  }

  private changed(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  private onMessage(link: WorkerLink, message: unknown, log: Logger): void {
    const decoded = decodeFrame(message);
    if (!decoded.ok) {
      log.warn({ problem: decoded.problem }, 'malformed frame from a worker ignored');
      return;
    }
    const frame = decoded.frame;
    link.lastFrameAt = (this.options.now ?? Date.now)();
    switch (frame.kind) {
      case 'hello': {
        if (link.machine.state !== 'awaiting_hello') return;
        const userId = link.userId;
        if (userId === null) return;
        if (frame.nodeType !== 'worker' || !frame.worker || frame.nodeId === '') {
          log.warn(
            { nodeType: frame.nodeType, nodeId: frame.nodeId },
            'a stream said hello without a worker offer: refused',
          );
          link.call.emit(
            'error',
            streamRefusal(
              'invalid_arguments',
              'invalid_arguments: this stream serves worker hosts; the hello must say node type "worker", a node id and an offer',
            ),
          );
          this.drop(link, 'not a worker', log);
          return;
        }
        const info: WorkerLinkInfo = {
          userId,
          workerId: frame.nodeId,
          offer: frame.worker,
          version: frame.version,
          connectedAt: new Date(),
        };
        link.info = info;
        let workers = this.byUser.get(userId);
        if (!workers) {
          workers = new Map();
          this.byUser.set(userId, workers);
        }
        const older = workers.get(info.workerId);
        workers.set(info.workerId, link);
        link.machine.moveTo('ready', {
          workerId: info.workerId,
          os: info.offer.os,
          provides: info.offer.provides,
        });
        if (older && older !== link) {
          this.drop(older, 'the worker connected again', log, true);
          older.call.end();
        }
        this.options.onConnected?.(info);
        this.changed();
        return;
      }
      case 'response':
      case 'output':
      case 'data':
        link.caller.deliver(frame);
        return;
      case 'health':
        return;
      case 'request':
      case 'cancel':
        log.warn({ kind: frame.kind }, 'unexpected frame from a worker ignored');
        return;
    }
  }

  /** Closes a link; `superseded`: its worker connected again, so it is not reported gone. */
  private drop(link: WorkerLink, reason: string, log: Logger, superseded = false): void {
    const wasReady = link.machine.state === 'ready';
    if (!link.machine.moveTo('closed', { reason })) return;
    this.links.delete(link);
    link.writer.close();
    link.caller.fail(reason);
    const info = link.info;
    if (info) {
      const workers = this.byUser.get(info.userId);
      if (workers?.get(info.workerId) === link) {
        workers.delete(info.workerId);
        if (workers.size === 0) this.byUser.delete(info.userId);
      }
      if (wasReady && !superseded) this.options.onDisconnected?.(info);
    }
    log.debug({ reason }, 'worker link dropped');
    this.changed();
  }
}
