/**
 * What the soaks share: a stand-in for tap's Test (the meshes only register
 * teardowns on it), arguments, and percentiles.
 *
 * @module
 */

import type { Test } from 'tap';

/** A stand-in for tap's Test whose teardowns `run` calls, last first. */
export function teardowns(): { t: Test; run: () => Promise<void> } {
  const fns: (() => unknown)[] = [];
  const t = { teardown: (fn: () => unknown) => fns.push(fn) } as unknown as Test;
  return {
    t,
    run: async () => {
      for (const fn of fns.reverse()) await Promise.resolve(fn()).catch(() => undefined);
    },
  };
}

/**
 * Parses `--key=value` arguments over `defaults`: numbers where the default is a
 * number, `true`/`false` where it is a boolean, text otherwise.
 */
export function parseArgs<T extends Record<string, number | string | boolean>>(
  argv: readonly string[],
  defaults: T,
): T {
  const args: Record<string, number | string | boolean> = { ...defaults };
  for (const arg of argv) {
    const [key, value = ''] = arg.replace(/^--/, '').split('=');
    if (!key || !(key in defaults)) throw new Error(`unknown argument ${arg}`);
    const kind = typeof defaults[key];
    if (kind === 'number' && Number.isFinite(Number(value))) args[key] = Number(value);
    else if (kind === 'boolean' && (value === 'true' || value === 'false')) {
      args[key] = value === 'true';
    } else if (kind === 'string') args[key] = value;
    else throw new Error(`bad value in ${arg}`);
  }
  return args as T;
}

/** The `p`-th percentile (0..100) of `values`, nearest rank; null when empty. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}
