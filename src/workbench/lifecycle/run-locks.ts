/**
 * One operation per run at a time on this node: reconcile, action and sync of a run's
 * directory never interleave with another operation on the same directory. Different
 * runs proceed in parallel.
 */
export class RunLocks {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** True while an operation on `runId` runs or waits. */
  busy(runId: string): boolean {
    return this.tails.has(runId);
  }

  /** Runs `work` once every earlier operation on `runId` has finished. */
  run<T>(runId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(runId) ?? Promise.resolve();
    const next = previous.then(work, work);
    const tail = next.catch(() => undefined);
    this.tails.set(runId, tail);
    void tail.then(() => {
      if (this.tails.get(runId) === tail) this.tails.delete(runId);
    });
    return next;
  }
}
