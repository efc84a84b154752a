/**
 * Per-workspace quotas: the bytes and the number of files a run's workspace may hold
 * (`MEMQL_WORKSPACE_MAX_BYTES`, `MEMQL_WORKSPACE_MAX_FILES`). Counted over regular
 * files, as the durable copy holds them. Checked before an `fs_write` writes, while a
 * command runs (see `quota-watch.ts` beside the host), and before a sync commits
 * anything: a workspace over its quota commits nothing of the change that took it there.
 *
 * @module
 */

import { WorkbenchError } from '../../contract/index.js';
import type { ManifestFile } from '../../store/index.js';

/** The limits of one workspace. */
export interface WorkspaceQuota {
  /** Total bytes of its files. */
  maxBytes: number;
  /** Number of its files. */
  maxFiles: number;
}

/** What a workspace holds. */
export interface WorkspaceUsage {
  bytes: number;
  files: number;
}

/** Which limit a usage is over, or null when it fits. Pure. */
export function overQuota(usage: WorkspaceUsage, quota: WorkspaceQuota): 'bytes' | 'files' | null {
  if (usage.bytes > quota.maxBytes) return 'bytes';
  if (usage.files > quota.maxFiles) return 'files';
  return null;
}

/** The usage of a set of files. */
export function usageOf(files: Iterable<{ size: number }>): WorkspaceUsage {
  let bytes = 0;
  let count = 0;
  for (const f of files) {
    bytes += f.size;
    count += 1;
  }
  return { bytes, files: count };
}

/**
 * The usage after writing `size` bytes at `path` (replacing or appending to what is
 * there) in a workspace whose files are `files`. Pure.
 */
export function usageAfterWrite(
  files: ReadonlyMap<string, ManifestFile>,
  path: string,
  size: number,
  append: boolean,
): WorkspaceUsage {
  const now = usageOf(files.values());
  const existing = files.get(path);
  if (existing === undefined) return { bytes: now.bytes + size, files: now.files + 1 };
  return { bytes: now.bytes + size - (append ? 0 : existing.size), files: now.files };
}

/** The refusal of a change that would take the workspace over its quota. */
export function quotaError(
  runId: string,
  over: 'bytes' | 'files',
  usage: WorkspaceUsage,
  quota: WorkspaceQuota,
  what: string,
): WorkbenchError {
  const limit =
    over === 'bytes'
      ? `${usage.bytes} bytes against a limit of ${quota.maxBytes} (MEMQL_WORKSPACE_MAX_BYTES)`
      : `${usage.files} files against a limit of ${quota.maxFiles} (MEMQL_WORKSPACE_MAX_FILES)`;
  return new WorkbenchError(
    'workspace_quota_exceeded',
    `workspace_quota_exceeded: ${what} would leave the workspace of run "${runId}" with ${limit}; nothing of it was kept. Delete files, or write less`,
    { runId, over, usage, quota },
  );
}
