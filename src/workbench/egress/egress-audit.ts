/**
 * The `workspace_egress.allowed` and `workspace_egress.refused` audit events: one per
 * connection through a run's proxy, written when it ends, with the run, host, port,
 * bytes each way, duration, and for a refusal its reason. Never a path, query, header
 * or body (the proxy does not report them), never a secret's value (only its name).
 *
 * Writing is best effort and off the connection's path: a connection never waits for
 * its row, a database outage loses rows (counted in a warning, never an error to the
 * command), and at most `maxPending` rows wait at once (a flood beyond that is dropped
 * and counted the same way).
 *
 * @module
 */

import type { EgressConnection } from '../../sandbox/index.js';
import { type AuditMetadata, type Db, insertAuditEvent } from '../../store/index.js';
import type { Logger } from '../../telemetry/index.js';

/** The egress event types. */
export const EGRESS_EVENT_TYPES = ['workspace_egress.allowed', 'workspace_egress.refused'] as const;

/** Who a connection is recorded for: the run's owner and, when one is known, its command. */
export interface EgressAttribution {
  readonly ownerUserId: string;
  readonly workspaceId: string | null;
  readonly commandId: string | null;
}

/** The audit metadata of one connection: scalars only, nothing a request carried. */
export function egressAuditMetadata(c: EgressConnection): AuditMetadata {
  return {
    host: c.host.slice(0, 253),
    port: c.port,
    bytesUp: c.bytesUp,
    bytesDown: c.bytesDown,
    durationMs: Math.round(c.durationMs),
    ...(c.reason !== undefined ? { reason: c.reason } : {}),
    ...(c.address !== undefined ? { address: c.address } : {}),
    ...(c.secret !== undefined ? { secret: c.secret } : {}),
  };
}

/** Writes the egress audit rows (see the module comment). */
export class EgressAudit {
  readonly #db: Db;
  readonly #log: Logger;
  readonly #maxPending: number;
  readonly #pending = new Set<Promise<void>>();
  #lost = 0;

  constructor(db: Db, log: Logger, maxPending = 1_000) {
    this.#db = db;
    this.#log = log;
    this.#maxPending = maxPending;
  }

  /** Records one connection, in the background. */
  record(c: EgressConnection, who: EgressAttribution): void {
    if (this.#pending.size >= this.#maxPending) {
      this.#lose(c.runId, 'too many egress audit rows waiting');
      return;
    }
    const write = insertAuditEvent(this.#db, {
      eventType: c.allowed ? 'workspace_egress.allowed' : 'workspace_egress.refused',
      runId: c.runId,
      workspaceId: who.workspaceId,
      commandId: who.commandId,
      ownerUserId: who.ownerUserId,
      metadata: egressAuditMetadata(c),
    }).then(
      () => undefined,
      (err: unknown) => this.#lose(c.runId, 'an egress audit row could not be written', err),
    );
    this.#pending.add(write);
    void write.finally(() => this.#pending.delete(write));
  }

  /** Resolves once every row recorded so far is written or lost. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  #lose(runId: string, message: string, err?: unknown): void {
    this.#lost += 1;
    // One line per hundred lost, so an outage does not flood the log.
    if (this.#lost % 100 === 1) {
      this.#log.warn({ runId, lost: this.#lost, ...(err ? { err } : {}) }, message);
    }
  }
}
