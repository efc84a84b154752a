/**
 * The serving side of one `NodeService.Stream`: reads frames, runs each request
 * through the node's handler with its own AbortSignal, streams its output, answers
 * it, and honours cancels. A malformed frame is answered with an error Response; the
 * stream and the node carry on.
 *
 * The serving side is usually the side that accepted the stream (a workbench node),
 * but not always: a worker host dials out, from behind NAT, and serves the requests
 * that come down its own connection. So a session serves over either end of a gRPC
 * call (see {@link SessionStream}).
 *
 * @module
 */

import type { Writable } from 'node:stream';
import { CallerGoneError, type OutputSink } from '../contract/index.js';
import type { Logger } from '../telemetry/index.js';
import { FrameWriter } from './frame-writer.js';
import {
  decodeFrame,
  type Frame,
  type HealthFrame,
  type HelloFrame,
  type RequestFrame,
  type WireAuthority,
} from './frames.js';
import { OUTPUT_CHUNK_BYTES } from './limits.js';
import { TunnelEnd } from './tunnel.js';
import {
  answerFromError,
  errorResponse,
  type HandlerAnswer,
  responseFrame,
} from './wire-errors.js';

/** A request as the node's handler sees it. */
export interface ServedRequest {
  readonly id: string;
  readonly method: string;
  readonly authority: WireAuthority | null;
  readonly payload: Buffer;
  /** The stream presented the configured mesh token. */
  readonly authenticated: boolean;
  /** The peer's node id from its hello; `null` before one. */
  readonly peerNodeId: string | null;
}

/** What a handler can do while it runs. */
export interface RequestContext {
  /** Aborted by a Cancel frame, the stream going away, or the node's shutdown grace ending. */
  readonly signal: AbortSignal;
  /**
   * Streams a chunk of output to the caller, ahead of the response. Queued in order;
   * exec output is bounded by its own limit, so the queue is too.
   */
  output: OutputSink;
  /**
   * Opens this request as a tunnel (see `tunnel.ts`): tells the caller it is open and
   * returns this side's end. The request's answer, once the handler returns it, closes
   * the tunnel; destroying the end does not answer it.
   */
  tunnel?(): TunnelEnd;
}

/** Answers requests of one method family. Should not throw; a throw is answered `internal`. */
export type RequestHandler = (
  request: ServedRequest,
  ctx: RequestContext,
) => Promise<HandlerAnswer>;

/**
 * The stream a session serves over: the server end of an accepted call
 * (`ServerDuplexStream`) or the client end of a call this node dialled
 * (`ClientDuplexStream`). Both are duplex streams of frames that know their peer.
 *
 * Their ends differ, and the session listens for both: only a server end emits
 * `cancelled` (the caller went away), and only a client end emits `status`, which is
 * the end of the whole call: gRPC has no half-close from the serving side, so when
 * the far end finishes, nothing more can be answered on it.
 */
export type SessionStream = Writable & { getPeer(): string };

/** What a session needs from its server. */
export interface SessionHost {
  readonly hello: HelloFrame;
  readonly handler: RequestHandler;
  readonly log: Logger;
  /** `null` when a request may start; otherwise the refusal to answer with. */
  admit(): { errorCode: string; message: string; payload?: Buffer } | null;
  /** Runs `task` as an in-flight request the server can wait for and abort. */
  track(task: (signal: AbortSignal) => Promise<void>, controller: AbortController): void;
  /** The health frame to send now. */
  health(): HealthFrame;
  /** Called once when the stream is over. */
  closed(session: ServerSession): void;
  /** Called with the peer's hello (a worker host's link is ready when its agent's arrives). */
  peerHello?(frame: HelloFrame): void;
}

/** The serving side of one stream, over either end of its call. */
export class ServerSession {
  private readonly writer: FrameWriter;
  private readonly inFlight = new Map<string, AbortController>();
  private readonly tunnels = new Map<string, TunnelEnd>();
  private peerNodeId: string | null = null;
  private done = false;
  private peerEnded = false;
  private readonly log: Logger;

  constructor(
    private readonly call: SessionStream,
    private readonly host: SessionHost,
    private readonly authenticated: boolean,
  ) {
    this.writer = new FrameWriter(call);
    this.log = host.log.child({ peer: call.getPeer() });
  }

  /** Says hello and starts reading. */
  start(): void {
    this.call.on('data', (message: unknown) => this.onMessage(message));
    this.call.on('end', () => {
      // The caller sent its last frame; answer what is in flight, then end our side.
      this.peerEnded = true;
      if (this.inFlight.size === 0) this.end();
    });
    // A server end only.
    this.call.on('cancelled', () => this.finish('peer cancelled the stream', true));
    // A client end only: the call is over, whatever its status.
    this.call.on('status', (status: { code?: number; details?: string }) =>
      this.finish(`call ended (status ${status.code ?? 'unknown'})`, true),
    );
    this.call.on('error', (err: Error) => this.finish(`stream error: ${err.message}`, true));
    this.call.on('close', () => this.finish('stream closed', true));
    this.send(this.host.hello);
    this.send(this.host.health());
  }

  /** Sends `frame`, or a fresh health frame. */
  sendHealth(frame: HealthFrame = this.host.health()): void {
    if (!this.done) this.send(frame);
  }

  /** Ends the stream from this side (the node is stopping). */
  end(): void {
    if (this.done) return;
    this.finish(this.peerEnded ? 'peer ended the stream' : 'node is stopping', true);
    this.call.end();
  }

  private send(frame: Frame): void {
    this.writer.send(frame).catch(() => {
      // The stream is gone; finish() has cleaned up, nothing is waiting on this write.
    });
  }

  private onMessage(message: unknown): void {
    const decoded = decodeFrame(message);
    if (!decoded.ok) {
      this.log.warn({ problem: decoded.problem, requestId: decoded.id }, 'malformed frame refused');
      this.send(
        errorResponse(decoded.id, 'invalid_arguments', `invalid_arguments: ${decoded.problem}`),
      );
      return;
    }
    const frame = decoded.frame;
    switch (frame.kind) {
      case 'hello':
        this.peerNodeId = frame.nodeId || null;
        this.log.info(
          { peerNodeId: frame.nodeId, peerNodeType: frame.nodeType },
          'peer said hello',
        );
        this.host.peerHello?.(frame);
        return;
      case 'health':
        return;
      case 'request':
        this.onRequest(frame);
        return;
      case 'cancel':
        this.inFlight.get(frame.id)?.abort();
        return;
      case 'data':
        this.tunnels.get(frame.id)?.receive(frame);
        return;
      case 'response':
      case 'output':
        this.log.warn(
          { kind: frame.kind, requestId: frame.id },
          'unexpected frame from a caller ignored',
        );
        return;
    }
  }

  private onRequest(frame: RequestFrame): void {
    if (this.inFlight.has(frame.id)) {
      this.send(
        errorResponse(
          frame.id,
          'invalid_arguments',
          `invalid_arguments: request id "${frame.id}" is already in flight on this stream`,
        ),
      );
      return;
    }
    const refusal = this.host.admit();
    if (refusal) {
      this.send(errorResponse(frame.id, refusal.errorCode, refusal.message, refusal.payload));
      return;
    }
    const controller = new AbortController();
    this.inFlight.set(frame.id, controller);
    const request: ServedRequest = {
      id: frame.id,
      method: frame.method,
      authority: frame.authority,
      payload: frame.payload,
      authenticated: this.authenticated,
      peerNodeId: this.peerNodeId,
    };
    const output: OutputSink = (stream, chunk) => {
      for (let at = 0; at < chunk.length; at += OUTPUT_CHUNK_BYTES) {
        this.send({
          kind: 'output',
          id: frame.id,
          stream,
          chunk: chunk.subarray(at, at + OUTPUT_CHUNK_BYTES),
        });
      }
    };
    const tunnel = (): TunnelEnd => {
      const end = new TunnelEnd(
        frame.id,
        (data) => this.writer.send(data),
        () => {},
      );
      this.tunnels.set(frame.id, end);
      this.send({ kind: 'data', id: frame.id, chunk: Buffer.alloc(0), eof: false, ack: 0 });
      return end;
    };
    this.host.track(async (signal) => {
      let answer: HandlerAnswer;
      try {
        answer = await this.host.handler(request, { signal, output, tunnel });
      } catch (err) {
        this.log.error({ err, requestId: frame.id }, 'request handler failed');
        answer = answerFromError(err);
      } finally {
        this.inFlight.delete(frame.id);
        this.tunnels.get(frame.id)?.destroy();
        this.tunnels.delete(frame.id);
      }
      await this.writer.send(responseFrame(frame.id, answer)).catch(() => {
        this.log.warn({ requestId: frame.id }, 'response not delivered: the stream is gone');
      });
      if (this.peerEnded && this.inFlight.size === 0) this.end();
    }, controller);
  }

  /**
   * The stream is over. Calls still in flight lose their caller, which did not cancel
   * them: they are aborted with a {@link CallerGoneError}, so a command one queued goes
   * on (only a Cancel frame cancels).
   */
  private finish(reason: string, abort: boolean): void {
    if (abort) {
      for (const c of this.inFlight.values()) c.abort(new CallerGoneError(reason));
    }
    if (this.done) return;
    this.done = true;
    this.log.info({ reason, inFlight: this.inFlight.size }, 'stream over');
    this.host.closed(this);
  }
}
