/**
 * Capped capture of one output stream, shared by every sandbox backend (bwrap,
 * docker, process).
 *
 * A command may write far more than anyone wants to keep (a 1 GB `yes` flood). The
 * capture keeps the first `limitBytes` bytes, counts the rest and drops it, and keeps
 * reading: a stream that is not drained blocks the command on a full pipe, and a stream
 * that is drained into memory grows the node by whatever the command writes.
 *
 * @module
 */

import { type Readable, Writable } from 'node:stream';
import type { OutputSink } from '../contract/index.js';

/** Keeps at most `limitBytes` of one stream; everything past the cap is counted, not kept. */
export class OutputCapture {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private total = 0;

  /**
   * @param limitBytes bytes to keep (0 keeps nothing; every byte then truncates).
   * @param onKept called with each kept piece, in order, as it arrives.
   */
  constructor(
    readonly limitBytes: number,
    private readonly onKept?: (chunk: Buffer) => void,
  ) {
    if (!Number.isSafeInteger(limitBytes) || limitBytes < 0) {
      throw new RangeError(`output limit must be a non-negative integer, got ${limitBytes}`);
    }
  }

  /** Adds bytes read from the stream. */
  write(chunk: Buffer): void {
    this.total += chunk.length;
    const room = this.limitBytes - this.kept;
    if (room <= 0) return;
    // Copy a partial slice so the stream's (possibly pooled) larger buffer is not retained.
    const piece = chunk.length <= room ? chunk : Buffer.from(chunk.subarray(0, room));
    this.chunks.push(piece);
    this.kept += piece.length;
    this.onKept?.(piece);
  }

  /** True once more bytes arrived than the cap keeps. */
  get truncated(): boolean {
    return this.total > this.kept;
  }

  /** Every byte seen, kept or not. */
  get totalBytes(): number {
    return this.total;
  }

  /**
   * A writable that feeds this capture and never pushes back, for producers that write
   * rather than being read (e.g. a demultiplexed Docker attach stream).
   */
  sink(): Writable {
    return new Writable({
      write: (chunk: Buffer, _encoding, callback) => {
        this.write(chunk);
        callback();
      },
    });
  }

  /** The kept bytes (at most `limitBytes`). */
  bytes(): Buffer {
    return Buffer.concat(this.chunks, this.kept);
  }
}

/**
 * Reads `stream` to its end into `capture`. Resolves on end, close or error: an output
 * pipe that breaks when the sandbox is killed is the end of the output, not a failure.
 */
export function drainInto(stream: Readable, capture: OutputCapture): Promise<void> {
  return new Promise((resolve) => {
    stream.on('data', (chunk: Buffer | string) => {
      capture.write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    });
    stream.once('end', () => resolve());
    stream.once('close', () => resolve());
    stream.once('error', () => resolve());
  });
}

/** The stdout and stderr captures of one command, wired to a single `onOutput` callback. */
export interface CommandOutput {
  readonly stdout: OutputCapture;
  readonly stderr: OutputCapture;
}

/** Creates both captures with the same per-stream cap. */
export function createCommandOutput(limitBytes: number, onOutput?: OutputSink): CommandOutput {
  return {
    stdout: new OutputCapture(limitBytes, onOutput && ((c) => onOutput('stdout', c))),
    stderr: new OutputCapture(limitBytes, onOutput && ((c) => onOutput('stderr', c))),
  };
}
