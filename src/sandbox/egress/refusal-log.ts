/**
 * A run's recent refusals, so a command's result can list the hosts refused while it
 * ran (`mark()` before, `since(mark)` after). Bounded: a flood of refusals keeps only
 * the newest `limit` entries.
 *
 * @module
 */

import type { RefusedHost } from './egress-types.js';

/** The refusal log of one endpoint. */
export class RefusalLog {
  private readonly entries: (RefusedHost & { seq: number })[] = [];
  private next = 0;

  constructor(private readonly limit = 1_000) {}

  /** Records a refusal. */
  add(entry: RefusedHost): void {
    this.entries.push({ host: entry.host, port: entry.port, reason: entry.reason, seq: this.next });
    this.next += 1;
    if (this.entries.length > this.limit) this.entries.splice(0, this.entries.length - this.limit);
  }

  /** The sequence number the next refusal gets. */
  mark(): number {
    return this.next;
  }

  /** Refusals at or after `mark`, each (host, port, reason) once, oldest first. */
  since(mark: number): RefusedHost[] {
    const seen = new Set<string>();
    const out: RefusedHost[] = [];
    for (const e of this.entries) {
      if (e.seq < mark) continue;
      const key = `${e.host}\0${e.port}\0${e.reason}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ host: e.host, port: e.port, reason: e.reason });
    }
    return out;
  }
}
