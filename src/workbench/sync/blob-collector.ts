/**
 * The blob collector: deletes blobs nothing needs any more (no current, history or
 * conflict entry names them, no sync is about to commit them; see `store/blob-refs.ts`),
 * each batch checked and deleted in one transaction that holds the blobs' locks, so a
 * sync recording an upload of one of them waits, and puts it again after the delete.
 * Candidates come from where references go: versions past retention, and a deleted
 * run's prefix (minus what its forks still name) with the blobs of other runs it named.
 *
 * @module
 */

import type { ObjectStore } from '../../objects/index.js';
import { type BlobRef, type Db, unneededBlobs } from '../../store/index.js';
import type { Logger } from '../../telemetry/index.js';
import { blobKey, runBlobPrefix } from './blobs.js';

/** Blobs checked and deleted per transaction. */
const BATCH = 200;

/** What the collector needs. */
export interface CollectorDeps {
  db: Db;
  objects: ObjectStore;
  log: Logger;
}

/** What a collection did. */
export interface Collected {
  /** Blobs deleted. */
  deleted: number;
  /** Candidates something still needs. */
  kept: number;
}

/** Deletes the candidates nothing needs; the rest stay. */
export async function collectBlobs(
  deps: CollectorDeps,
  candidates: readonly BlobRef[],
): Promise<Collected> {
  let deleted = 0;
  for (let i = 0; i < candidates.length; i += BATCH) {
    const batch = candidates.slice(i, i + BATCH);
    deleted += await deps.db.transaction(async (tx) => {
      const unneeded = await unneededBlobs(tx, batch);
      // Deleted before the locks go: no sync can record one of these in between.
      if (unneeded.length > 0) {
        await deps.objects.deleteMany(unneeded.map((b) => blobKey(b.runId, b.hash)));
      }
      return unneeded.length;
    });
  }
  if (deleted > 0) deps.log.info({ deleted, kept: candidates.length - deleted }, 'blobs collected');
  return { deleted, kept: candidates.length - deleted };
}

/** Every blob under a run's prefix, as candidates. */
export async function blobsUnder(objects: ObjectStore, runId: string): Promise<BlobRef[]> {
  const prefix = runBlobPrefix(runId);
  const out: BlobRef[] = [];
  let cursor: string | undefined;
  do {
    const page = await objects.list(prefix, cursor === undefined ? {} : { cursor });
    for (const item of page.items) {
      const hash = item.key.slice(prefix.length);
      if (/^[0-9a-f]{64}$/.test(hash)) out.push({ runId, hash });
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return out;
}
