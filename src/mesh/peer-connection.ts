/**
 * The dialling side of one stream to one replica. It connects, says hello, tracks
 * the replica's hello and health, multiplexes requests by id, and reconnects with
 * jittered backoff whenever the stream ends.
 *
 * Lifecycle ({@link PEER_LIFECYCLE}, one log line per move):
 * `connecting` (dialled, no hello yet) -> `ready` (hello received) -> `backoff`
 * (stream over, waiting to redial) -> `connecting` ...; `closed` is final.
 *
 * @module
 */

import type { Client, ClientDuplexStream } from '@grpc/grpc-js';
import type { MeshTlsConfig } from '../config/index.js';
import type { Logger } from '../telemetry/index.js';
import { defineStateMachine, StateMachine } from '../telemetry/index.js';
import { type BackoffOptions, DEFAULT_BACKOFF, nextBackoff } from './backoff.js';
import { FrameWriter } from './frame-writer.js';
import {
  decodeFrame,
  type Frame,
  type HealthFrame,
  type HelloFrame,
  type ResponseFrame,
  type WireAuthority,
} from './frames.js';
import { HEALTH_STALE_MS } from './limits.js';
import { dialNodeStream, endpointKey } from './node-dialer.js';
import type { PeerView } from './peer-picker.js';
import {
  type PeerRequestOptions,
  PeerUnavailableError,
  StreamCaller,
  type TunnelOpening,
} from './stream-caller.js';

/** Where one replica listens. */
export interface PeerEndpoint {
  /** IP address (or host name) to dial. */
  readonly host: string;
  readonly port: number;
  /** The seed's host name, checked against the replica's TLS certificate. */
  readonly serverName: string;
}

/** The state of a {@link PeerConnection}. */
export type PeerState = 'connecting' | 'ready' | 'backoff' | 'closed';

/**
 * A {@link PeerConnection}'s lifecycle, logged as `peer`. A stream may end before its
 * hello (`connecting -> backoff`); from `closed` nothing moves.
 */
export const PEER_LIFECYCLE = defineStateMachine<PeerState>('peer', 'connecting', {
  connecting: ['ready', 'backoff', 'closed'],
  ready: ['backoff', 'closed'],
  backoff: ['connecting', 'closed'],
  closed: [],
});

/** Options of {@link PeerConnection}. */
export interface PeerConnectionOptions {
  readonly endpoint: PeerEndpoint;
  /** What this node says in hello. */
  readonly self: Omit<HelloFrame, 'kind'>;
  readonly token: string | null;
  readonly tls: MeshTlsConfig | null;
  readonly log: Logger;
  readonly backoff?: BackoffOptions;
  /** Uniform draws in [0, 1) for backoff jitter. Default `Math.random`. */
  readonly random?: () => number;
  /** Clock, ms. Default `Date.now`. */
  readonly now?: () => number;
  /** Health older than this is stale, ms. Default {@link HEALTH_STALE_MS}. */
  readonly healthStaleMs?: number;
  /** Called after every change of state, hello or health. */
  readonly onChange?: () => void;
}

/** One stream to one replica, redialled until closed. */
export class PeerConnection {
  readonly key: string;
  private readonly machine: StateMachine<PeerState>;
  private attempt = 0;
  private generation = 0;
  private client: Client | undefined;
  private call: ClientDuplexStream<unknown, unknown> | undefined;
  private writer: FrameWriter | undefined;
  private hello: HelloFrame | undefined;
  private health: { frame: HealthFrame; at: number } | undefined;
  /** Requests of the current stream. */
  private caller: StreamCaller | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly log: Logger;

  constructor(private readonly options: PeerConnectionOptions) {
    this.key = endpointKey(options.endpoint);
    this.log = options.log.child({ peer: this.key });
    // At info: a peer's moves are how an operator follows the links of the mesh.
    this.machine = new StateMachine(PEER_LIFECYCLE, this.log, {
      level: 'info',
      onMove: () => options.onChange?.(),
    });
  }

  /** Dials for the first time. */
  start(): void {
    this.connect();
  }

  /** The replica's node id from its hello, if it said one. */
  get nodeId(): string | null {
    return this.hello?.nodeId || null;
  }

  /** The current lifecycle state. */
  get currentState(): PeerState {
    return this.machine.state;
  }

  /** What the picker needs to know, as of now. */
  view(): PeerView {
    const now = (this.options.now ?? Date.now)();
    const stale = this.options.healthStaleMs ?? HEALTH_STALE_MS;
    const connected = this.currentState === 'ready';
    const h = this.health;
    const fresh = h !== undefined && now - h.at <= stale;
    return {
      key: this.key,
      nodeId: this.nodeId,
      connected,
      healthy: connected && fresh && h.frame.healthy,
      running: h?.frame.running ?? 0,
      queued: h?.frame.queued ?? 0,
      capacity: h?.frame.capacity ?? 0,
      ...(h?.frame.toolchain ? { toolchain: h.frame.toolchain } : {}),
    };
  }

  /**
   * Sends one request and resolves with its Response. Rejects with
   * {@link PeerUnavailableError} when the stream is not ready or ends first.
   */
  request(
    method: string,
    authority: WireAuthority | null,
    payload: Buffer,
    options: PeerRequestOptions = {},
  ): Promise<ResponseFrame> {
    const caller = this.caller;
    if (this.currentState !== 'ready' || caller === undefined) {
      return Promise.reject(new PeerUnavailableError(`peer ${this.key} is not connected`, false));
    }
    return caller.request(method, authority, payload, options);
  }

  /** Opens a tunnel to the replica (see {@link StreamCaller.tunnel}). */
  tunnel(method: string, authority: WireAuthority | null, payload: Buffer): Promise<TunnelOpening> {
    const caller = this.caller;
    if (this.currentState !== 'ready' || caller === undefined) {
      return Promise.reject(new PeerUnavailableError(`peer ${this.key} is not connected`, false));
    }
    return caller.tunnel(method, authority, payload);
  }

  /** Stops redialling and ends the stream; pending requests reject. */
  close(): void {
    if (!this.machine.moveTo('closed')) return;
    clearTimeout(this.timer);
    this.teardown('connection closed');
  }

  private connect(): void {
    if (this.currentState === 'closed') return;
    this.generation += 1;
    const generation = this.generation;
    // The first dial finds the machine in `connecting` already: no move, no line.
    this.machine.moveTo('connecting', { attempt: this.attempt });
    const { client, call } = dialNodeStream(this.options.endpoint, {
      tls: this.options.tls,
      token: this.options.token,
    });
    this.client = client;
    this.call = call;
    this.writer = new FrameWriter(call);
    this.caller = new StreamCaller(this.writer, `peer ${this.key}`);
    const down = (reason: string) => {
      if (generation === this.generation) this.onDown(reason);
    };
    call.on('data', (message: unknown) => {
      if (generation === this.generation) this.onMessage(message);
    });
    call.on('error', (err: Error & { code?: number; details?: string }) =>
      down(err.details ?? err.message),
    );
    call.on('end', () => down('the replica ended the stream'));
    call.on('close', () => down('stream closed'));
    this.writer.send({ kind: 'hello', ...this.options.self }).catch(() => {});
  }

  private onMessage(message: unknown): void {
    const decoded = decodeFrame(message);
    if (!decoded.ok) {
      this.log.warn({ problem: decoded.problem }, 'malformed frame from replica ignored');
      this.caller?.malformed(decoded.id, decoded.problem);
      return;
    }
    this.onFrame(decoded.frame);
  }

  private onFrame(frame: Frame): void {
    switch (frame.kind) {
      case 'hello':
        this.hello = frame;
        this.attempt = 0;
        this.machine.moveTo('ready', { nodeId: frame.nodeId, version: frame.version });
        return;
      case 'health': {
        const was = this.health?.frame.healthy;
        this.health = { frame, at: (this.options.now ?? Date.now)() };
        if (was !== frame.healthy) {
          this.log.info({ healthy: frame.healthy, nodeId: this.nodeId }, 'peer health changed');
        }
        this.options.onChange?.();
        return;
      }
      case 'response':
      case 'output':
      case 'data':
        this.caller?.deliver(frame);
        return;
      case 'request':
      case 'cancel':
        this.log.warn({ kind: frame.kind }, 'unexpected frame from replica ignored');
        return;
    }
  }

  private onDown(reason: string): void {
    this.teardown(reason);
    if (this.currentState === 'closed') return;
    const delay = nextBackoff(
      this.attempt,
      (this.options.random ?? Math.random)(),
      this.options.backoff ?? DEFAULT_BACKOFF,
    );
    this.attempt += 1;
    this.health = undefined;
    this.machine.moveTo('backoff', { reason, retryInMs: delay });
    this.timer = setTimeout(() => this.connect(), delay);
    this.timer.unref();
  }

  private teardown(reason: string): void {
    this.generation += 1;
    this.writer?.close();
    this.call?.cancel();
    this.client?.close();
    this.caller?.fail(reason);
    this.writer = undefined;
    this.call = undefined;
    this.client = undefined;
    this.caller = undefined;
  }
}
