/**
 * The calling side of requests over one stream, whichever side opened it: ids, the
 * pending answers, output routed to its request, cancels sent when a caller's signal
 * aborts, and every pending request failed at once when the stream goes. The agent
 * calls worker hosts through it over streams the workers opened.
 *
 * @module
 */

import { abortDetaches, type OutputSink } from '../contract/index.js';
import type { FrameWriter } from './frame-writer.js';
import type { DataFrame, OutputFrame, ResponseFrame, WireAuthority } from './frames.js';
import { MAX_FRAME_BYTES } from './limits.js';
import { TunnelEnd } from './tunnel.js';
import { errorFromResponse } from './wire-errors.js';

/** Per-request options of a request. */
export interface PeerRequestOptions {
  /** Aborting sends a Cancel frame; the request still resolves with the replica's answer. */
  readonly signal?: AbortSignal;
  /** Receives Output frames of this request. */
  readonly onOutput?: OutputSink;
}

/** What opening a tunnel came to: its end, or the Response that refused it. */
export type TunnelOpening =
  | { readonly open: true; readonly end: TunnelEnd }
  | { readonly open: false; readonly response: ResponseFrame };

/** A request could not be completed because the stream is not (or no longer) up. */
export class PeerUnavailableError extends Error {
  /**
   * @param sent - whether the request frame had been written: if so the replica may
   *   have acted on it, and the caller must not assume it did not.
   */
  constructor(
    message: string,
    readonly sent: boolean,
  ) {
    super(message);
    this.name = 'PeerUnavailableError';
  }
}

interface Pending {
  resolve(frame: ResponseFrame): void;
  reject(err: Error): void;
  onOutput?: OutputSink;
  onData?: (frame: DataFrame) => void;
}

/** Requests over one stream, matched to their answers by id. */
export class StreamCaller {
  private readonly pending = new Map<string, Pending>();
  private nextId = 0;
  private failed: string | null = null;

  /**
   * @param writer - the stream's writer.
   * @param name - the other side, as messages name it.
   */
  constructor(
    private readonly writer: FrameWriter,
    private readonly name: string,
  ) {}

  /** Requests waiting for their answer. */
  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * Sends one request and resolves with its Response. Rejects with
   * {@link PeerUnavailableError} when the stream is gone or goes first; its `sent`
   * says whether the request had been written (the other side may have acted on it).
   */
  request(
    method: string,
    authority: WireAuthority | null,
    payload: Buffer,
    options: PeerRequestOptions = {},
  ): Promise<ResponseFrame> {
    return this.#start(method, authority, payload, options).answer;
  }

  /**
   * Opens a tunnel (see `tunnel.ts`): sends the request, and resolves with this side's
   * end once the other side says it is open, or with the Response that refused it.
   * Destroying the end cancels the request; the Response closes the end. Rejects as
   * {@link request} does when the stream is gone before the tunnel opened.
   */
  tunnel(method: string, authority: WireAuthority | null, payload: Buffer): Promise<TunnelOpening> {
    return new Promise<TunnelOpening>((resolve, reject) => {
      const controller = new AbortController();
      let end: TunnelEnd | null = null;
      const started = this.#start(method, authority, payload, {
        signal: controller.signal,
        onData: (frame) => {
          if (end !== null) {
            end.receive(frame);
            return;
          }
          end = new TunnelEnd(
            started.id,
            (data) => this.writer.send(data),
            () => controller.abort(),
          );
          resolve({ open: true, end });
          end.receive(frame);
        },
      });
      started.answer.then(
        (response) => {
          if (end === null) resolve({ open: false, response });
          else end.over(response.ok ? null : errorFromResponse(response));
        },
        (err: Error) => {
          if (end === null) reject(err);
          else end.destroy(err);
        },
      );
    });
  }

  #start(
    method: string,
    authority: WireAuthority | null,
    payload: Buffer,
    options: PeerRequestOptions & { onData?: (frame: DataFrame) => void },
  ): { id: string; answer: Promise<ResponseFrame> } {
    if (this.failed !== null || !this.writer.open) {
      return {
        id: '',
        answer: Promise.reject(new PeerUnavailableError(`${this.name} is not connected`, false)),
      };
    }
    if (payload.length > MAX_FRAME_BYTES - 64 * 1024) {
      return {
        id: '',
        answer: Promise.resolve({
          kind: 'response',
          id: '',
          ok: false,
          errorCode: 'payload_too_large',
          message: `payload_too_large: the call is ${payload.length} bytes, over the mesh frame limit of ${MAX_FRAME_BYTES} bytes`,
          payload: Buffer.alloc(0),
        }),
      };
    }
    this.nextId += 1;
    const id = String(this.nextId);
    const writer = this.writer;
    const answer = new Promise<ResponseFrame>((resolve, reject) => {
      let written = false;
      // A caller that only went away leaves the call running on the far side: no Cancel.
      const cancel = () => {
        if (abortDetaches(options.signal?.reason)) return;
        if (this.pending.has(id)) writer.send({ kind: 'cancel', id }).catch(() => {});
      };
      const settle = () => options.signal?.removeEventListener('abort', cancel);
      this.pending.set(id, {
        resolve: (frame) => {
          settle();
          resolve(frame);
        },
        reject: (err) => {
          settle();
          reject(
            err instanceof PeerUnavailableError
              ? new PeerUnavailableError(err.message, written)
              : err,
          );
        },
        ...(options.onOutput ? { onOutput: options.onOutput } : {}),
        ...(options.onData ? { onData: options.onData } : {}),
      });
      writer
        .send({ kind: 'request', id, method, authority, payload })
        .then(() => {
          written = true;
          if (options.signal?.aborted) cancel();
          else options.signal?.addEventListener('abort', cancel, { once: true });
        })
        .catch(() => {
          const entry = this.pending.get(id);
          this.pending.delete(id);
          entry?.reject(
            new PeerUnavailableError(
              `${this.name}: the stream closed before the call was sent`,
              false,
            ),
          );
        });
    });
    return { id, answer };
  }

  /** Hands an answer, output or tunnel bytes to their request; unknown ids are dropped. */
  deliver(frame: ResponseFrame | OutputFrame | DataFrame): void {
    if (frame.kind === 'output') {
      this.pending.get(frame.id)?.onOutput?.(frame.stream, frame.chunk);
      return;
    }
    if (frame.kind === 'data') {
      this.pending.get(frame.id)?.onData?.(frame);
      return;
    }
    const entry = this.pending.get(frame.id);
    this.pending.delete(frame.id);
    entry?.resolve(frame);
  }

  /**
   * A frame for request `id` could not be read: the request fails with `problem`
   * (an ordinary error, not {@link PeerUnavailableError}: the stream is still up).
   */
  malformed(id: string, problem: string): void {
    const entry = this.pending.get(id);
    this.pending.delete(id);
    entry?.reject(new Error(problem));
  }

  /** The stream is gone: every pending request rejects, and no new one is sent. */
  fail(reason: string): void {
    this.failed ??= reason;
    const failed = [...this.pending.values()];
    this.pending.clear();
    for (const entry of failed) {
      entry.reject(new PeerUnavailableError(`${this.name} went away: ${reason}`, true));
    }
  }
}
