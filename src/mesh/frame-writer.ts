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

/** Writes frames to one stream, in order, waiting for drain. */
export class FrameWriter {
  private tail: Promise<void> = Promise.resolve();
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
    const next = this.tail.then(() => this.writeOne(frame));
    this.tail = next.catch(() => {});
    return next;
  }

  /** Stops taking frames; queued ones that have not gone out reject. */
  close(): void {
    this.closed = true;
  }

  private async writeOne(frame: Frame): Promise<void> {
    if (!this.open) throw new StreamClosedError();
    if (this.stream.write(encodeFrame(frame))) return;
    if (!this.open) throw new StreamClosedError();
    await waitForDrain(this.stream);
  }
}
