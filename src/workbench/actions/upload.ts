/**
 * `fs_write` in parts: a file larger than one call carries is staged part by part
 * outside the workspace, in `<workbench root>/.uploads/<runId>/<upload id>`, and put
 * at its path in one rename by the part marked `complete`. Nothing of it is visible
 * in the workspace (to commands, reads or sync) before that rename, and an upload
 * that never completes leaves no file behind: its stage is removed when it completes,
 * is refused or aborted, and on every other path `upload-stages.ts` lists.
 *
 * Parts are written in order: a part's `offset` must be the number of bytes staged so
 * far, and a part at offset 0 starts the upload again. A stage lives on the replica
 * that holds the workspace; when the workspace moves mid-upload, the next part is
 * answered with `staged: 0` and the caller starts again.
 *
 * @module
 */

import { constants } from 'node:fs';
import { chmod, chown, lstat, mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type ActionArgs,
  type FsUploadPartPayload,
  type FsWritePayload,
  MAX_UPLOAD_BYTES,
  WorkbenchError,
} from '../../contract/index.js';
import { type FileContext, placeFile } from '../../files/index.js';
import { removeUploadStage } from './upload-stages.js';

/** The part of an `fs_write` call that makes it an upload. */
export type UploadPart = NonNullable<ActionArgs<'fs_write'>['upload']>;

/** Bytes of a part's content. */
export function partBytes(args: ActionArgs<'fs_write'>): Buffer {
  return Buffer.from(args.content, args.encoding === 'base64' ? 'base64' : 'utf8');
}

/** Refusals that leave the stage as it is: the part was out of order, the stage is sound. */
const keepingStage = new WeakSet<object>();

function offsetRefusal(upload: UploadPart, staged: number): WorkbenchError {
  const err = new WorkbenchError(
    'invalid_arguments',
    `invalid_arguments: upload "${upload.id}" has ${staged} bytes staged on this replica, so its next part goes at offset ${staged}, not ${upload.offset}; send that part (or start again at offset 0)`,
    { uploadId: upload.id, staged },
  );
  keepingStage.add(err);
  return err;
}

/**
 * After a part failed with `err`: removes the upload's stage, unless the part was only
 * out of order (the stage is sound and the answer says where the next part goes). A
 * refused upload (over the quota, over the upload limit) keeps nothing, so a caller
 * that gives up leaves nothing behind; one that tries again starts at offset 0.
 */
export async function dropFailedStage(
  stageDir: string,
  upload: UploadPart,
  err: unknown,
): Promise<void> {
  if (typeof err === 'object' && err !== null && keepingStage.has(err)) return;
  await removeUploadStage(stageDir, upload.id);
}

/** `abort: true`: the upload's stage goes, nothing is written, the next part starts at 0. */
export async function abortUpload(
  stageDir: string,
  path: string,
  upload: UploadPart,
): Promise<FsUploadPartPayload> {
  if (upload.complete) {
    throw new WorkbenchError(
      'invalid_arguments',
      `invalid_arguments: upload "${upload.id}": a part cannot both complete and abort the upload`,
    );
  }
  await removeUploadStage(stageDir, upload.id);
  return { path, upload: { id: upload.id, staged: 0, complete: false, aborted: true } };
}

async function stagedSize(file: string): Promise<number> {
  const st = await lstat(file).catch(() => null);
  return st?.isFile() ? st.size : 0;
}

/**
 * Opens a stage for the next part: created (or emptied) for a first part, appended to
 * otherwise. The folder is made when missing, and once more if the sweep removed it
 * between the two steps. The stage is the node's own folder: opened without following
 * a link all the same.
 */
async function openStage(stageDir: string, file: string, first: boolean) {
  const flags =
    constants.O_WRONLY |
    constants.O_CREAT |
    constants.O_NOFOLLOW |
    (first ? constants.O_TRUNC : constants.O_APPEND);
  for (let attempt = 0; ; attempt++) {
    await mkdir(stageDir, { recursive: true, mode: 0o700 });
    try {
      return await open(file, flags, 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt > 0) throw err;
    }
  }
}

/**
 * Writes one part of an upload to its stage and, on the part marked `complete`,
 * places the staged file at `args.path`. The caller checked the quota for the size
 * the file reaches with this part.
 */
export async function writeUploadPart(
  ctx: FileContext,
  stageDir: string,
  args: ActionArgs<'fs_write'> & { upload: UploadPart },
): Promise<FsWritePayload | FsUploadPartPayload> {
  const { upload } = args;
  if (args.append) {
    throw new WorkbenchError(
      'invalid_arguments',
      'invalid_arguments: append cannot be combined with upload; an upload always makes the whole file',
    );
  }
  const bytes = partBytes(args);
  const reached = upload.offset + bytes.length;
  if (reached > MAX_UPLOAD_BYTES) {
    throw new WorkbenchError(
      'payload_too_large',
      `payload_too_large: upload "${upload.id}" would make a file of ${reached} bytes; an upload makes files of at most ${MAX_UPLOAD_BYTES} bytes`,
      { uploadId: upload.id, size: reached, limit: MAX_UPLOAD_BYTES },
    );
  }
  const file = join(stageDir, upload.id);
  if (upload.offset > 0) {
    const staged = await stagedSize(file);
    if (staged !== upload.offset) throw offsetRefusal(upload, staged);
  }
  const handle = await openStage(stageDir, file, upload.offset === 0);
  try {
    await handle.writeFile(bytes);
    if (upload.complete) await handle.sync();
  } finally {
    await handle.close();
  }
  if (!upload.complete) {
    return { path: args.path, upload: { id: upload.id, staged: reached, complete: false } };
  }
  if (upload.size !== undefined && upload.size !== reached) {
    throw new WorkbenchError(
      'invalid_arguments',
      `invalid_arguments: upload "${upload.id}" staged ${reached} bytes but its last part says the file has ${upload.size}; nothing was written, start the upload again`,
      { uploadId: upload.id, staged: reached, size: upload.size },
    );
  }
  try {
    await chmod(file, args.mode ?? 0o644);
    if (ctx.owner) await chown(file, ctx.owner.uid, ctx.owner.gid);
    const path = await placeFile(ctx, args.path, file);
    return {
      path,
      bytesWritten: reached,
      size: reached,
      upload: { id: upload.id, staged: reached, complete: true },
    };
  } finally {
    await removeUploadStage(stageDir, upload.id);
  }
}
