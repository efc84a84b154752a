/**
 * Failures of workspace sync, and their translation to the contract's codes at the
 * edge of `workspace-sync.ts`: one table from object store and store errors to
 * `unavailable`, with a `reason` in the payload that says which dependency failed.
 *
 * @module
 */

import { WorkbenchError } from '../../contract/index.js';
import { isObjectStoreError } from '../../objects/index.js';
import { StoreError } from '../../store/index.js';

/**
 * Why a sync, hydrate or reconcile could not finish. Carried as
 * `payload.reason` of a `WorkbenchError('unavailable')`; a reason never changes meaning.
 * - `object_store`: the object store failed or was unreachable.
 * - `database`: Postgres failed or was unreachable.
 * - `manifest_conflict`: other nodes kept committing to the manifest; the retry lost too.
 * - `files_changing`: workspace files changed while they were being read for upload.
 * - `blob_missing`: the manifest names content the object store does not hold.
 * - `blob_corrupt`: downloaded bytes do not match the manifest's size and hash.
 */
export type SyncFailureReason =
  | 'object_store'
  | 'database'
  | 'manifest_conflict'
  | 'files_changing'
  | 'blob_missing'
  | 'blob_corrupt';

/** Which operation failed, for messages. */
export type SyncOperation = 'sync' | 'hydrate' | 'reconcile';

/**
 * A file changed between the scan and the read that uploads it (its size or hash no
 * longer match), or left the workspace. Internal: the sync retries once, then reports
 * `files_changing`.
 */
export class FileChangedDuringSync extends Error {
  override readonly name = 'FileChangedDuringSync';
  constructor(readonly path: string) {
    super(`workspace file "${path}" changed while it was being synced`);
  }
}

/** Downloaded bytes do not match the manifest entry. */
export class BlobCorrupt extends Error {
  override readonly name = 'BlobCorrupt';
  constructor(
    readonly path: string,
    readonly key: string,
  ) {
    super(`the stored content of "${path}" (${key}) does not match its manifest hash`);
  }
}

const WHAT: Record<SyncFailureReason, string> = {
  object_store: 'the object store failed',
  database: 'the database failed',
  manifest_conflict: 'other nodes kept changing the manifest at the same time',
  files_changing: 'workspace files kept changing while they were read',
  blob_missing: 'the object store has no content for a file the manifest names',
  blob_corrupt: 'the object store returned content that does not match the manifest',
};

const AFTER: Record<SyncOperation, string> = {
  sync: 'the durable copy is unchanged; retry the sync',
  hydrate: 'the local copy is incomplete; retry before running commands',
  reconcile: 'the local copy may be partly updated; retry before running commands',
};

function failure(
  op: SyncOperation,
  runId: string,
  reason: SyncFailureReason,
  detail: string,
  cause: unknown,
): WorkbenchError {
  return new WorkbenchError(
    'unavailable',
    `unavailable: workspace ${op} of run "${runId}" failed: ${WHAT[reason]} (${detail}); ${AFTER[op]}`,
    { runId, reason },
    { cause },
  );
}

/**
 * Turns a failure of a dependency into `WorkbenchError('unavailable')` naming the
 * reason; anything else (a bug, a local filesystem error) passes through unchanged.
 */
export function translateSyncError(err: unknown, op: SyncOperation, runId: string): unknown {
  if (err instanceof WorkbenchError) return err;
  if (isObjectStoreError(err, 'object_not_found')) {
    return failure(op, runId, 'blob_missing', err.code, err);
  }
  if (isObjectStoreError(err)) return failure(op, runId, 'object_store', err.code, err);
  if (err instanceof StoreError && err.code === 'conflict') {
    return failure(op, runId, 'manifest_conflict', 'conflict', err);
  }
  if (err instanceof StoreError && err.code === 'unavailable') {
    return failure(op, runId, 'database', err.code, err);
  }
  if (err instanceof FileChangedDuringSync) {
    return failure(op, runId, 'files_changing', err.path, err);
  }
  if (err instanceof BlobCorrupt) return failure(op, runId, 'blob_corrupt', err.path, err);
  return err;
}
