/**
 * One end of a tunnel: a request whose bytes go both ways in Data frames (see the
 * `Data` message of `node.proto`). Each end is a `Duplex`: what is written to it goes
 * to the other side in chunks of at most {@link OUTPUT_CHUNK_BYTES}, with at most
 * {@link TUNNEL_WINDOW_BYTES} of them not yet reported read there; what the other side
 * sends is read from it, and reported read as its reader takes it. `end()` sends eof
 * (the other side reads its end); destroying an end closes the tunnel, which its owner
 * turns into a Cancel (the caller) or the request's end (the serving side).
 *
 * @module
 */

import { Duplex } from 'node:stream';
import type { DataFrame } from './frames.js';
import { OUTPUT_CHUNK_BYTES, TUNNEL_WINDOW_BYTES } from './limits.js';

/** Sends one Data frame; rejects when the stream is gone. */
export type DataSender = (frame: DataFrame) => Promise<void>;

/** One end of a tunnel over a mesh stream. */
export class TunnelEnd extends Duplex {
  /** Bytes sent and not yet reported read by the other side. */
  #inFlight = 0;
  /** Bytes received and taken by this end's reader but not yet reported. */
  #unreported = 0;
  /** Wakes a write waiting for the window. */
  #wake: (() => void) | null = null;
  /** The other side sent eof. */
  #remoteEnded = false;
  #closed = false;

  /**
   * @param send - sends a Data frame of this tunnel.
   * @param onClose - called once when this end is destroyed, with the error if any.
   */
  constructor(
    private readonly id: string,
    private readonly send: DataSender,
    private readonly onClose: (err: Error | null) => void,
  ) {
    super({ allowHalfOpen: true });
  }

  /** Hands a Data frame of this tunnel from the other side to this end. */
  receive(frame: DataFrame): void {
    if (this.#closed) return;
    if (frame.ack > 0) {
      this.#inFlight = Math.max(0, this.#inFlight - frame.ack);
      const wake = this.#wake;
      this.#wake = null;
      wake?.();
    }
    if (frame.chunk.length > 0 && !this.#remoteEnded) {
      this.#unreported += frame.chunk.length;
      // Reported in batches of half the window: by a reader keeping up at once, by one
      // that does not when it asks for more (`_read`). A sender waiting for the window
      // has a whole window here, so a batch always comes.
      if (this.push(frame.chunk)) this.#reportBatch();
    }
    if (frame.eof && !this.#remoteEnded) {
      this.#remoteEnded = true;
      this.push(null);
    }
  }

  /**
   * The tunnel is over on the other side (its request was answered): `err` when it
   * failed, else the read side ends as it stands and writes have nowhere to go.
   */
  over(err: Error | null): void {
    if (this.#closed) return;
    if (err) {
      this.destroy(err);
      return;
    }
    if (!this.#remoteEnded) {
      this.#remoteEnded = true;
      this.push(null);
    }
    this.#closed = true;
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
    if (this.writableFinished || this.writableEnded) return;
    this.end();
  }

  override _read(): void {
    this.#reportBatch();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (err?: Error) => void): void {
    this.#sendAll(chunk).then(() => callback(), callback);
  }

  override _final(callback: (err?: Error) => void): void {
    if (this.#closed) {
      callback();
      return;
    }
    this.send({ kind: 'data', id: this.id, chunk: EMPTY, eof: true, ack: 0 }).then(
      () => callback(),
      callback,
    );
  }

  override _destroy(err: Error | null, callback: (err: Error | null) => void): void {
    const wasClosed = this.#closed;
    this.#closed = true;
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
    if (!wasClosed) this.onClose(err);
    callback(err);
  }

  async #sendAll(chunk: Buffer): Promise<void> {
    for (let at = 0; at < chunk.length; at += OUTPUT_CHUNK_BYTES) {
      const piece = chunk.subarray(at, at + OUTPUT_CHUNK_BYTES);
      while (this.#inFlight >= TUNNEL_WINDOW_BYTES && !this.#closed) {
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
      }
      if (this.#closed) throw new Error('the tunnel is closed');
      this.#inFlight += piece.length;
      await this.send({ kind: 'data', id: this.id, chunk: piece, eof: false, ack: 0 });
    }
  }

  #reportBatch(): void {
    if (this.#unreported < TUNNEL_WINDOW_BYTES / 2) return;
    const ack = this.#unreported;
    this.#unreported = 0;
    this.send({ kind: 'data', id: this.id, chunk: EMPTY, eof: false, ack }).catch(() => {
      // The stream is gone; its end closes this tunnel.
    });
  }
}

const EMPTY = Buffer.alloc(0);
