/**
 * Ordered, flow-controlled writes of frames to one gRPC stream. Frames go out in the
 * order they were sent; when the stream's buffer is full the next write waits for
 * `drain`, so a slow peer slows its writer instead of growing memory without bound.
 *
 * @module
 */

import type { Writable } from 'node:stream';
import { encodeFrame, type Frame } from './frames.js';

/** Thrown for a frame that could not be written because the stream is gone. */
export class StreamClosedError extends Error {
  constructor(message = 'the mesh stream is closed') {
    super(message);
    this.name = 'StreamClosedError';
  }
}

function waitForDrain(stream: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      stream.off('drain', onDrain);
      stream.off('close', onClose);
      stream.off('error', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => done();
    const onClose = () => done(new StreamClosedError());
    stream.on('drain', onDrain);
    stream.on('close', onClose);
    stream.on('error', onClose);
  });
}

const WRITTEN: Promise<void> = Promise.resolve();

/**
 * Writes frames to one stream, in order, waiting for drain. A frame sent while nothing
 * waits is written at once, in the caller's turn (no promise hop before the write);
 * once a write finds the buffer full, later frames queue behind the drain.
 */
export class FrameWriter {
  /** Settles when every frame sent so far has gone out; null when none waits. */
  private backlog: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly stream: Writable) {
    stream.once('close', () => {
      this.closed = true;
    });
  }

  /** Whether frames can still be written. */
  get open(): boolean {
    return !this.closed && !this.stream.destroyed && !this.stream.writableEnded;
  }

  /**
   * Queues `frame`. Resolves once the stream has taken it (after waiting for drain
   * when its buffer was full); rejects with {@link StreamClosedError} when the
   * stream closed first.
   */
  send(frame: Frame): Promise<void> {
    if (this.backlog === null) return this.writeNow(frame);
    const next = this.backlog.then(() => this.writeNow(frame));
    this.wait(next);
    return next;
  }

  /** Stops taking frames; queued ones that have not gone out reject. */
  close(): void {
    this.closed = true;
  }

  private writeNow(frame: Frame): Promise<void> {
    try {
      if (!this.open) throw new StreamClosedError();
      if (this.stream.write(encodeFrame(frame))) return WRITTEN;
      if (!this.open) throw new StreamClosedError();
    } catch (err) {
      return Promise.reject(err);
    }
    const drained = waitForDrain(this.stream);
    this.wait(drained);
    return drained;
  }

  /** Later frames go after `pending` has settled, whichever way. */
  private wait(pending: Promise<void>): void {
    const settled = pending.then(
      () => {},
      () => {},
    );
    this.backlog = settled;
    void settled.then(() => {
      if (this.backlog === settled) this.backlog = null;
    });
  }
}
