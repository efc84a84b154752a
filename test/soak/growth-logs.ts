/**
 * What the growth soak reads from its node processes' output: the lines they logged at
 * error level, and the heap a full collection left (`--trace-gc`, which the soak gives
 * them). RSS alone cannot tell a leak from a heap that has not been collected yet; the
 * heap after a mark-compact can. The buffers are emptied as they are read, so an hour
 * of output does not grow the soak itself.
 *
 * @module
 */

import type { NodeProcess } from '../support/node-process.js';

/**
 * `--trace-gc`'s line for a full collection: `... Mark-Compact 141.3 (206.1) -> 32.6
 * (162.4) MB, ...`, the heap used (and committed) before and after, in MiB.
 */
const MARK_COMPACT = /Mark-Compact(?: \([a-z ]+\))? [\d.]+ \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB/;

/** One process's full collections so far: how many, and the heap the last one left (bytes). */
export interface FullCollections {
  count: number;
  heapAfter: number | null;
}

/** The heap a `--trace-gc` line says a full collection left, in bytes; null for any other line. */
export function heapAfterFullCollection(line: string): number | null {
  const m = MARK_COMPACT.exec(line);
  return m ? Math.round(Number(m[1]) * 1024 * 1024) : null;
}

/**
 * Reads and empties each process's output: error lines (level 50 and up) counted into
 * `errors` by process and message, full collections into `collections` by process.
 */
export function drainOutput(
  procs: ReadonlyMap<string, NodeProcess>,
  errors: Record<string, number>,
  collections: Map<string, FullCollections>,
): void {
  for (const [name, proc] of procs) {
    for (const l of proc.lines) {
      if (l.level < 50) continue;
      const err = (l as { err?: { message?: string } }).err?.message ?? '';
      const key = `${name}: ${l.msg}: ${err}`.slice(0, 200);
      errors[key] = (errors[key] ?? 0) + 1;
    }
    const gc = collections.get(name) ?? { count: 0, heapAfter: null };
    for (const line of proc.other) {
      const heap = heapAfterFullCollection(line);
      if (heap === null) continue;
      gc.count += 1;
      gc.heapAfter = heap;
    }
    collections.set(name, gc);
    // Nothing waits on these lines once the nodes are up.
    proc.lines.length = 0;
    proc.other.length = 0;
  }
}
