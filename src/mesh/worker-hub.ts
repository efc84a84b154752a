/**
 * Worker hosts as an agent node holds them: the streams `memql worker` processes open
 * to this node's `NodeService.Stream`, each authenticated by an API token of the user
 * who owns the worker, with the worker's offer from its hello. Calls go to a worker
 * down the stream it opened ({@link WorkerHub.send}); a worker is only ever found
 * under its owner's user id, so no call can reach another user's machine.
 *
 * The lifecycle of one worker's stream as this node holds it
 * ({@link WORKER_STREAM_LIFECYCLE}, logged as `worker-stream`, one line per move):
 * `authenticating` (token being checked) -> `awaiting_hello` -> `ready` (the worker
 * said hello with its offer) -> `closed`. A worker that connects again under the same
 * id replaces its older stream, which is closed. The worker's own side of the stream,
 * dialling and redialling, is another machine: `worker-link` (`worker/worker-link.ts`).
 *
 * @module
 */

import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { WorkerOffer } from '../contract/index.js';
import type { Logger } from '../telemetry/index.js';
import { defineStateMachine, StateMachine } from '../telemetry/index.js';
import { nextChange } from './change-wait.js';
import { FrameWriter } from './frame-writer.js';
import { decodeFrame, type HelloFrame, type ResponseFrame, type WireAuthority } from './frames.js';
import { HEALTH_STALE_MS } from './limits.js';
import { MESH_TOKEN_METADATA_KEY } from './mesh-auth.js';
import { type PeerRequestOptions, PeerUnavailableError, StreamCaller } from './stream-caller.js';
import { streamRefusal } from './wire-errors.js';

/** The state of one worker's stream, as the agent holds it. */
export type WorkerStreamState = 'authenticating' | 'awaiting_hello' | 'ready' | 'closed';

/** A worker stream's lifecycle, logged as `worker-stream`. */
export const WORKER_STREAM_LIFECYCLE = defineStateMachine<WorkerStreamState>(
  'worker-stream',
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

/** A worker stream's identity, for the hooks. */
export interface WorkerStreamInfo {
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
  readonly onConnected?: (stream: WorkerStreamInfo) => void;
  /** After a ready worker's stream ended. */
  readonly onDisconnected?: (stream: WorkerStreamInfo) => void;
  readonly log: Logger;
  /** A worker silent this long is not offered to calls, ms. Default {@link HEALTH_STALE_MS}. */
  readonly staleMs?: number;
  /** Clock, ms. Default `Date.now`. */
  readonly now?: () => number;
}

const BEARER = 'Bearer ';

/** One worker's stream. */
class WorkerStream {
  readonly machine: StateMachine<WorkerStreamState>;
  readonly writer: FrameWriter;
  readonly caller: StreamCaller;
  /** The token's user, once checked. */
  userId: string | null = null;
  /** When the worker last sent a frame (it sends Health every second), ms. */
  lastFrameAt = 0;
  info: WorkerStreamInfo | null = null;

  constructor(
    readonly call: ServerDuplexStream<unknown, unknown>,
    log: Logger,
  ) {
    this.machine = new StateMachine(WORKER_STREAM_LIFECYCLE, log, { level: 'info' });
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
  /** Ready streams by user id, then worker id. */
  private readonly byUser = new Map<string, Map<string, WorkerStream>>();
  private readonly streams = new Set<WorkerStream>();
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
    const stream = new WorkerStream(call, log);
    this.streams.add(stream);
    const early: unknown[] = [];
    let authenticated = false;
    call.on('data', (message: unknown) => {
      if (authenticated) this.onMessage(stream, message, log);
      else early.push(message);
    });
    const down = (reason: string) => this.drop(stream, reason, log);
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
        if (stream.machine.state === 'closed') return;
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
        stream.machine.moveTo('awaiting_hello', { userId });
        stream.userId = userId;
        stream.writer.send({ kind: 'hello', ...this.options.self }).catch(() => {});
        for (const message of early.splice(0)) this.onMessage(stream, message, log);
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
    for (const stream of this.byUser.get(userId)?.values() ?? []) {
      const view = stream.view(now, staleMs);
      if (view) views.push(view);
    }
    return views.sort((a, b) => a.workerId.localeCompare(b.workerId));
  }

  /** Every worker stream that is ready here, as its user and worker ids. */
  links(): { readonly userId: string; readonly workerId: string }[] {
    const out: { userId: string; workerId: string }[] = [];
    for (const [userId, workers] of this.byUser) {
      for (const workerId of workers.keys()) out.push({ userId, workerId });
    }
    return out;
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
    const stream = this.byUser.get(userId)?.get(workerId);
    if (stream?.machine.state !== 'ready') {
      return Promise.reject(new PeerUnavailableError(`worker ${workerId} is not connected`, false));
    }
    return stream.caller.request(method, authority, payload, options);
  }

  /** Resolves at the next change of any stream, or after `ms`. */
  waitForChange(ms: number): Promise<void> {
    return nextChange(this.waiters, ms);
  }

  /** Ends every worker stream; new ones are refused. */
  close(): void {
    this.closed = true;
    for (const stream of [...this.streams]) {
      this.drop(stream, 'the node is stopping', this.options.log);
      stream.call.end();
    }
  }

  private changed(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  private onMessage(stream: WorkerStream, message: unknown, log: Logger): void {
    const decoded = decodeFrame(message);
    if (!decoded.ok) {
      log.warn({ problem: decoded.problem }, 'malformed frame from a worker ignored');
      return;
    }
    const frame = decoded.frame;
    stream.lastFrameAt = (this.options.now ?? Date.now)();
    switch (frame.kind) {
      case 'hello': {
        if (stream.machine.state !== 'awaiting_hello') return;
        const userId = stream.userId;
        if (userId === null) return;
        if (frame.nodeType !== 'worker' || !frame.worker || frame.nodeId === '') {
          log.warn(
            { nodeType: frame.nodeType, nodeId: frame.nodeId },
            'a stream said hello without a worker offer: refused',
          );
          stream.call.emit(
            'error',
            streamRefusal(
              'invalid_arguments',
              'invalid_arguments: this stream serves worker hosts; the hello must say node type "worker", a node id and an offer',
            ),
          );
          this.drop(stream, 'not a worker', log);
          return;
        }
        const info: WorkerStreamInfo = {
          userId,
          workerId: frame.nodeId,
          offer: frame.worker,
          version: frame.version,
          connectedAt: new Date(),
        };
        stream.info = info;
        let workers = this.byUser.get(userId);
        if (!workers) {
          workers = new Map();
          this.byUser.set(userId, workers);
        }
        const older = workers.get(info.workerId);
        workers.set(info.workerId, stream);
        stream.machine.moveTo('ready', {
          workerId: info.workerId,
          os: info.offer.os,
          provides: info.offer.provides,
        });
        if (older && older !== stream) {
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
        stream.caller.deliver(frame);
        return;
      case 'health':
        return;
      case 'request':
      case 'cancel':
        log.warn({ kind: frame.kind }, 'unexpected frame from a worker ignored');
        return;
    }
  }

  /** Closes a stream; `superseded`: its worker connected again, so it is not reported gone. */
  private drop(stream: WorkerStream, reason: string, log: Logger, superseded = false): void {
    const wasReady = stream.machine.state === 'ready';
    if (!stream.machine.moveTo('closed', { reason })) return;
    this.streams.delete(stream);
    stream.writer.close();
    stream.caller.fail(reason);
    const info = stream.info;
    if (info) {
      const workers = this.byUser.get(info.userId);
      if (workers?.get(info.workerId) === stream) {
        workers.delete(info.workerId);
        if (workers.size === 0) this.byUser.delete(info.userId);
      }
      if (wasReady && !superseded) this.options.onDisconnected?.(info);
    }
    log.debug({ reason }, 'worker stream dropped');
    this.changed();
  }
}
