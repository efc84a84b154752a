/**
 * Which replica served each run last, as this agent node saw it: the pin of the run's
 * next call, without reading the run's workspace row again (a statement on every call
 * otherwise, and the largest part of what the mesh adds to a call).
 *
 * What it holds is a hint, never an authority. A replica that no longer holds the run's
 * workspace refuses the call before running anything (`workspace_moved`, or a draining
 * node), and the dispatcher then forgets the hint and reads the row; a replica that is
 * not healthy is not used as a hint at all (the row is read, so a takeover another
 * agent replica saw is followed). The map keeps the runs used most recently, at most
 * {@link RunHolders.capacity}.
 *
 * @module
 */

/** Runs remembered by default. */
export const RUN_HOLDERS_CAPACITY = 10_000;

/** The replica that last served each run, most recent last, bounded. */
export class RunHolders {
  private readonly holders = new Map<string, string>();

  constructor(readonly capacity = RUN_HOLDERS_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    }
  }

  /** The node that served `runId` last, or undefined. */
  get(runId: string): string | undefined {
    return this.holders.get(runId);
  }

  /** Notes that `nodeId` served `runId`; the oldest run goes past the capacity. */
  served(runId: string, nodeId: string): void {
    this.holders.delete(runId);
    this.holders.set(runId, nodeId);
    if (this.holders.size > this.capacity) {
      const oldest = this.holders.keys().next();
      if (!oldest.done) this.holders.delete(oldest.value);
    }
  }

  /** Forgets `runId`: its replica refused, or went away. */
  forget(runId: string): void {
    this.holders.delete(runId);
  }

  /** Runs remembered. */
  get size(): number {
    return this.holders.size;
  }
}
