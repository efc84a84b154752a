/**
 * Deleting everything under a prefix. The general way pages through the listing with
 * its cursor (never from the start again: a store whose listing costs a walk would
 * make that quadratic) and deletes each page as it comes, several pages at once. The
 * filesystem store removes a whole directory instead when the prefix is one
 * (`removeTree`), without listing at all.
 *
 * @module
 */

import type { Dirent } from 'node:fs';
import { readdir, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { ObjectStore } from './object-store.js';

/**
 * Pages deleted at once by {@link deleteByListing}: the next page is listed while the
 * last one is deleted. More would only queue up on the object server.
 */
export const PAGES_IN_FLIGHT = 2;
/** Entries removed at once by {@link removeTree}. */
const REMOVALS_IN_FLIGHT = 16;

/** Lists `prefix` page by page and deletes each page; returns how many objects. */
export async function deleteByListing(
  store: Pick<ObjectStore, 'list' | 'deleteMany'>,
  prefix: string,
): Promise<number> {
  let removed = 0;
  let failure: { err: unknown } | null = null;
  const inFlight = new Set<Promise<void>>();
  let cursor: string | undefined;
  try {
    do {
      const page = await store.list(prefix, { limit: 1000, ...(cursor ? { cursor } : {}) });
      cursor = page.nextCursor;
      if (page.items.length === 0) continue;
      removed += page.items.length;
      const p: Promise<void> = store
        .deleteMany(page.items.map((i) => i.key))
        .catch((err: unknown) => {
          failure ??= { err };
        })
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
      if (inFlight.size >= PAGES_IN_FLIGHT) await Promise.race(inFlight);
    } while (cursor !== undefined && failure === null);
  } finally {
    await Promise.all(inFlight);
  }
  if (failure !== null) throw (failure as { err: unknown }).err;
  return removed;
}

/**
 * Removes a directory tree, never following a symbolic link (a link is removed as
 * the entry it is). Returns how many regular files were removed. A missing tree is 0.
 */
export async function removeTree(dir: string): Promise<number> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 0;
    throw err;
  }
  let files = 0;
  for (let i = 0; i < entries.length; i += REMOVALS_IN_FLIGHT) {
    const counts = await Promise.all(
      entries.slice(i, i + REMOVALS_IN_FLIGHT).map(async (e) => {
        const path = join(dir, e.name);
        if (e.isDirectory()) return removeTree(path);
        await unlink(path).catch((err: unknown) => {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        });
        return e.isFile() ? 1 : 0;
      }),
    );
    for (const n of counts) files += n;
  }
  await rmdir(dir).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  });
  return files;
}
