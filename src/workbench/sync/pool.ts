/**
 * Bounded concurrency for the many small transfers of a sync.
 *
 * @module
 */

/** Files hashed, uploaded or downloaded at once when no limit is configured. */
export const DEFAULT_SYNC_CONCURRENCY = 8;

/**
 * Runs `fn` over `items` with at most `limit` calls in flight and returns the results
 * in input order. After the first failure no new call starts; the calls already
 * running are awaited (so nothing is left writing in the background), then the first
 * error is thrown.
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${limit}`);
  }
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index] as T, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure !== undefined) throw failure.error;
  return results;
}
