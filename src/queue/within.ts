import { setTimeout as delay } from 'node:timers/promises';

/** Resolves true if `p` settles within `ms`, false otherwise. */
export async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  const timer = new AbortController();
  try {
    return await Promise.race([
      p.then(() => true),
      delay(ms, false, { signal: timer.signal }).catch(() => false),
    ]);
  } finally {
    timer.abort();
  }
}
