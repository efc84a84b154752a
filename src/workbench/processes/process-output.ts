/**
 * A background process's output on its way to the store: what the sandbox sends is
 * buffered per stream and appended (`appendProcessOutput`) in order, one append at a
 * time per process, at least every `flushMs` and whenever `flushBytes` wait, so a
 * reader on any replica sees it within a flush of its writing. A database that does not
 * answer is tried again with backoff while the bytes wait (at most `maxBufferBytes` per
 * process; beyond that the newest are dropped and counted, never a hole in the middle).
 * {@link ProcessOutput.close} flushes what is left before the process's end is recorded.
 *
 * @module
 */

import { setTimeout as delay } from 'node:timers/promises';
import type { OutputStream } from '../../contract/index.js';
import { appendProcessOutput, type Db } from '../../store/index.js';
import type { Logger } from '../../telemetry/index.js';

/** Options of {@link ProcessOutput}. */
export interface ProcessOutputOptions {
  readonly db: Db;
  readonly processId: string;
  /** How long written bytes wait at most before they are appended. Default 200 ms. */
  readonly flushMs?: number;
  /** Bytes that start a flush at once. Default 256 KiB. */
  readonly flushBytes?: number;
  /** Most bytes waiting per process; beyond, output is dropped and counted. Default 16 MiB. */
  readonly maxBufferBytes?: number;
  readonly log: Logger;
}

/** One append's worth: the largest piece sent in one statement. */
const MAX_APPEND_BYTES = 1024 * 1024;

/** The output pump of one process. */
export class ProcessOutput {
  readonly #o: Required<Omit<ProcessOutputOptions, 'db' | 'log' | 'processId'>> &
    ProcessOutputOptions;
  readonly #pending: Record<OutputStream, Buffer[]> = { stdout: [], stderr: [] };
  readonly #offset: Record<OutputStream, number> = { stdout: 0, stderr: 0 };
  #waiting = 0;
  #dropped = 0;
  #timer: NodeJS.Timeout | null = null;
  #flushing: Promise<void> | null = null;
  #closed = false;

  constructor(options: ProcessOutputOptions) {
    this.#o = {
      flushMs: 200,
      flushBytes: 256 * 1024,
      maxBufferBytes: 16 * 1024 * 1024,
      ...options,
    };
  }

  /** Bytes dropped because the buffer was full (a long database outage). */
  get dropped(): number {
    return this.#dropped;
  }

  /** Where each stream's durable copy ends. */
  get offsets(): Readonly<Record<OutputStream, number>> {
    return { ...this.#offset };
  }

  /** The sink the sandbox writes to. */
  readonly write = (stream: OutputStream, chunk: Buffer): void => {
    if (this.#closed || chunk.length === 0) return;
    if (this.#waiting + chunk.length > this.#o.maxBufferBytes) {
      this.#dropped += chunk.length;
      if (this.#dropped === chunk.length) {
        this.#o.log.warn(
          { processId: this.#o.processId },
          'process output dropped: the store has not taken it for too long',
        );
      }
      return;
    }
    this.#pending[stream].push(chunk);
    this.#waiting += chunk.length;
    if (this.#waiting >= this.#o.flushBytes) this.#flushSoon(0);
    else this.#flushSoon(this.#o.flushMs);
  };

  /** Appends everything written so far; resolves when it is stored. */
  async flush(): Promise<void> {
    while (this.#waiting > 0 || this.#flushing !== null) {
      await (this.#flushing ?? this.#startDrain());
    }
  }

  /** Takes no more output and stores what is left. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.flush();
  }

  #flushSoon(ms: number): void {
    if (this.#flushing !== null) return; // the running drain takes it
    if (this.#timer !== null && ms > 0) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      if (this.#flushing === null) void this.#startDrain();
    }, ms);
    this.#timer.unref();
  }

  /**
   * Starts the one drain (see {@link flush}). It is cleared by identity once settled: a
   * drain that finds nothing to do settles at once, and must not leave itself behind.
   */
  #startDrain(): Promise<void> {
    const drain: Promise<void> = this.#drain().finally(() => {
      if (this.#flushing === drain) this.#flushing = null;
      if (this.#waiting > 0 && !this.#closed) this.#flushSoon(this.#o.flushMs);
    });
    this.#flushing = drain;
    return drain;
  }

  async #drain(): Promise<void> {
    for (;;) {
      const stream: OutputStream | null =
        this.#pending.stdout.length > 0
          ? 'stdout'
          : this.#pending.stderr.length > 0
            ? 'stderr'
            : null;
      if (stream === null) return;
      await this.#append(stream, this.#take(stream));
    }
  }

  /** Up to {@link MAX_APPEND_BYTES} of a stream's waiting bytes, as one piece. */
  #take(stream: OutputStream): Buffer {
    const queue = this.#pending[stream];
    const parts: Buffer[] = [];
    let size = 0;
    while (queue.length > 0 && size < MAX_APPEND_BYTES) {
      const next = queue[0]!;
      const room = MAX_APPEND_BYTES - size;
      if (next.length <= room) {
        parts.push(next);
        queue.shift();
        size += next.length;
      } else {
        parts.push(next.subarray(0, room));
        queue[0] = next.subarray(room);
        size += room;
      }
    }
    this.#waiting -= size;
    return Buffer.concat(parts);
  }

  /** Appends one piece at the stream's durable end, retrying while the store is away. */
  async #append(stream: OutputStream, piece: Buffer): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await appendProcessOutput(
          this.#o.db,
          this.#o.processId,
          stream,
          this.#offset[stream],
          piece,
        );
        if (result === 'appended' || result === 'duplicate') {
          this.#offset[stream] += piece.length;
          return;
        }
        // Not running (its end was recorded elsewhere: lost) or a gap (never: one writer).
        this.#o.log.warn(
          { processId: this.#o.processId, stream, result },
          'process output not kept',
        );
        this.#offset[stream] += piece.length;
        return;
      } catch (err) {
        if (attempt === 0) {
          this.#o.log.warn(
            { err, processId: this.#o.processId },
            'process output could not be stored; trying again',
          );
        }
        await delay(Math.min(2000, 50 * 2 ** Math.min(attempt, 6)));
      }
    }
  }
}
