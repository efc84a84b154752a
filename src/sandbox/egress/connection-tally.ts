/**
 * The report of one connection, gathered while it lasts and given to `onConnection`
 * exactly once when it ends: the decision, the address dialled, the bytes exchanged
 * with the destination (counted on the upstream sockets) and the duration.
 *
 * @module
 */

import type { Socket } from 'node:net';
import type { EgressConnection } from './egress-types.js';
import type { Refusal } from './refusal.js';

/** Where a connection's report goes. */
export interface ConnectionSink {
  /** At the refusal, so the run's refusal log has it before the client hears of it. */
  refused(refusal: Refusal): void;
  /** Once, when the connection has ended. */
  finished(c: EgressConnection): void;
}

/** One connection's report in the making. */
export class ConnectionTally {
  private readonly started = performance.now();
  private readonly upstream = new Set<Socket>();
  private refusal: Refusal | null = null;
  private done = false;
  /** The address dialled, once known. */
  address: string | undefined;
  /** Names of the secrets added. */
  secret: string | undefined;

  constructor(
    private readonly runId: string,
    public host: string,
    public port: number,
    private readonly sink: ConnectionSink,
  ) {}

  /** Counts this socket's bytes as the connection's traffic with the destination. */
  track(socket: Socket): void {
    this.upstream.add(socket);
  }

  /** Marks the connection refused (the first refusal wins). */
  refuse(refusal: Refusal): void {
    if (this.refusal !== null) return;
    this.refusal = refusal;
    this.host = refusal.host;
    this.port = refusal.port;
    if (refusal.address !== undefined) this.address = refusal.address;
    if (!this.done) this.sink.refused(refusal);
  }

  /** Whether the connection has been refused. */
  get refused(): boolean {
    return this.refusal !== null;
  }

  /** Reports the connection; later calls do nothing. */
  finish(): void {
    if (this.done) return;
    this.done = true;
    let bytesUp = 0;
    let bytesDown = 0;
    for (const s of this.upstream) {
      bytesUp += s.bytesWritten ?? 0;
      bytesDown += s.bytesRead ?? 0;
    }
    const r = this.refusal;
    this.sink.finished({
      runId: this.runId,
      host: this.host,
      port: this.port,
      allowed: r === null,
      ...(r === null ? {} : { reason: r.reason }),
      ...(this.address === undefined ? {} : { address: this.address }),
      bytesUp,
      bytesDown,
      durationMs: performance.now() - this.started,
      ...(this.secret === undefined ? {} : { secret: this.secret }),
    });
  }
}
