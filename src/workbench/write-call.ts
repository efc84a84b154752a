/**
 * `fs_write` on a held copy: the quota check before anything is written (the run's
 * staged uploads count as part of the workspace), and an upload's parts, whose stage
 * goes when a part fails for anything but its order, or when the caller aborts.
 *
 * @module
 */

import { posix } from 'node:path';
import type { ActionArgs } from '../contract/index.js';
import { type FileContext, fsWrite } from '../files/index.js';
import {
  abortUpload,
  dropFailedStage,
  stagedBytes,
  uploadStageDir,
  writeUploadPart,
} from './actions/index.js';
import type { HeldCopy } from './lifecycle/index.js';
import { overQuota, quotaError, usageAfterWrite, type WorkspaceQuota } from './sync/index.js';

/** What an `fs_write` needs of the host. */
export interface WriteCallDeps {
  workbenchRoot: string;
  quota?: WorkspaceQuota;
}

/** Runs `work` on the run's held copy, synced after when `mutating` (`WorkspaceAccess.call`). */
export type HeldCall = <T>(mutating: boolean, work: (held: HeldCopy) => Promise<T>) => Promise<T>;

/**
 * Refuses an `fs_write` that would take the workspace over its quota, before it
 * writes. An upload's part is checked for the size the file reaches with it; the
 * run's other staged uploads count as part of the workspace.
 */
async function checkWriteQuota(
  deps: WriteCallDeps,
  held: HeldCopy,
  args: ActionArgs<'fs_write'>,
): Promise<void> {
  const quota = deps.quota;
  if (!quota) return;
  const bytes = Buffer.byteLength(args.content, args.encoding === 'base64' ? 'base64' : 'utf8');
  const size = bytes + (args.upload?.offset ?? 0);
  const path = posix.normalize(args.path).replace(/^(\.\/)+/, '');
  const usage = usageAfterWrite(held.base.files, path, size, args.append && !args.upload);
  usage.bytes += await stagedBytes(uploadStageDir(deps.workbenchRoot, held.runId), args.upload?.id);
  const over = overQuota(usage, quota);
  if (over) throw quotaError(held.runId, over, usage, quota, `writing ${size} bytes to "${path}"`);
}

/** One `fs_write` call, plain or an upload's part. */
export function writeCall(
  deps: WriteCallDeps,
  runId: string,
  args: ActionArgs<'fs_write'>,
  call: HeldCall,
  files: (held: HeldCopy) => FileContext,
): Promise<unknown> {
  const upload = args.upload;
  if (!upload) {
    return call(true, async (held) => {
      await checkWriteQuota(deps, held, args);
      return fsWrite(files(held), args);
    });
  }
  // A part only stages bytes out of the workspace: the last one is synced.
  const stage = uploadStageDir(deps.workbenchRoot, runId);
  if (upload.abort) return call(false, () => abortUpload(stage, args.path, upload));
  return call(upload.complete, async (held) => {
    try {
      await checkWriteQuota(deps, held, args);
      return await writeUploadPart(files(held), stage, { ...args, upload });
    } catch (err) {
      await dropFailedStage(stage, upload, err);
      throw err;
    }
  });
}
