/**
 * A workspace's durable copy: scan, diff and fenced commit of local changes, blobs in
 * the object store, hydrate and reconcile, the warm cache of hydrated copies, and the
 * workspace quotas checked against what it holds. The only door into the room: files
 * outside `sync/` import from here.
 *
 * @module
 */

export { type BaseSnapshot, emptySnapshot } from './base-snapshot.js';
export { blobsUnder, type Collected, collectBlobs } from './blob-collector.js';
export { blobKey } from './blobs.js';
export { DEFAULT_SYNC_CONCURRENCY, mapLimit } from './pool.js';
export { hydrateWorkspace, reconcileWorkspace } from './reconcile.js';
export { planRestore, type RestorePlan, type RestoreResult, restoreCopy } from './restore.js';
export { materializeTarget, type WorkspaceSyncDeps } from './sync-deps.js';
export { DEFAULT_WARM_MANIFESTS_MAX, WarmCache, type WarmMark } from './warm-cache.js';
export {
  overQuota,
  quotaError,
  usageAfterWrite,
  usageOf,
  type WorkspaceQuota,
  type WorkspaceUsage,
} from './workspace-quota.js';
export { type SyncResult, syncWorkspace } from './workspace-sync.js';
