/**
 * One wait for "the next change, or a time bound", shared by the mesh's registries of
 * streams (replicas, worker hosts, peer agents): each keeps a set of waiters and calls
 * them all at every change of any stream's state.
 *
 * @module
 */

/**
 * Resolves when a function added to `waiters` is called (the owner's next change), or
 * after `ms`, whichever is first; it leaves `waiters` as it found it.
 */
export function nextChange(waiters: Set<() => void>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      waiters.delete(done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    waiters.add(done);
  });
}
