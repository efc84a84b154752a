/**
 * `fs_write` in parts: a file larger than one call carries is staged part by part
 * outside the workspace, in `<workbench root>/.uploads/<runId>/<upload id>`, and put
 * at its path in one rename by the part marked `complete`. Nothing of it is visible
 * in the workspace (to commands, reads or sync) before that rename, and an upload
 * that never completes leaves no file behind: its stage is removed when it completes,
 * when it starts again, or by the cleanup sweep once it has been idle
 * {@link UPLOAD_IDLE_MS}.
 *
 * Parts are written in order: a part's `offset` must be the number of bytes staged so
 * far, and a part at offset 0 starts the upload again. A stage lives on the replica
 * that holds the workspace; when the workspace moves mid-upload, the next part is
 * answered with `staged: 0` and the caller starts again.
 *
 * @module
 */

import { constants } from 'node:fs';
import { chmod, chown, lstat, mkdir, open, readdir, rm, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type ActionArgs, MAX_UPLOAD_BYTES, WorkbenchError } from '../../contract/index.js';
import { type FileContext, placeFile } from './files.js';

/** How long a stage may sit untouched before the cleanup sweep removes it, ms: one hour. */
export const UPLOAD_IDLE_MS = 60 * 60 * 1000;

/** The folder under the workbench root holding the stages of every run's uploads. */
export const UPLOADS_DIR = '.uploads';

/** The stage folder of one run's uploads. */
export function uploadStageDir(workbenchRoot: string, runId: string): string {
  return join(workbenchRoot, UPLOADS_DIR, runId);
}

/** The part of an `fs_write` call that makes it an upload. */
export type UploadPart = NonNullable<ActionArgs<'fs_write'>['upload']>;

/** Bytes of a part's content. */
export function partBytes(args: ActionArgs<'fs_write'>): Buffer {
  return Buffer.from(args.content, args.encoding === 'base64' ? 'base64' : 'utf8');
}

function offsetRefusal(upload: UploadPart, staged: number): WorkbenchError {
  return new WorkbenchError(
    'invalid_arguments',
    `invalid_arguments: upload "${upload.id}" has ${staged} bytes staged on this replica, so its next part goes at offset ${staged}, not ${upload.offset}; send that part (or start again at offset 0)`,
    { uploadId: upload.id, staged },
  );
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
) {
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
    await rm(file, { force: true });
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
    await rm(file, { force: true });
  }
}

/**
 * Removes stages idle for longer than `idleMs` and stage folders left empty; returns
 * how many stages went. A folder or file that vanishes meanwhile is skipped.
 */
export async function sweepUploads(
  workbenchRoot: string,
  now: number,
  idleMs = UPLOAD_IDLE_MS,
): Promise<number> {
  const root = join(workbenchRoot, UPLOADS_DIR);
  const runs = await readdir(root).catch(() => [] as string[]);
  let removed = 0;
  for (const runId of runs) {
    const dir = join(root, runId);
    const names = await readdir(dir).catch(() => [] as string[]);
    let left = names.length;
    for (const name of names) {
      const st = await stat(join(dir, name)).catch(() => null);
      if (st !== null && now - st.mtimeMs <= idleMs) continue;
      await rm(join(dir, name), { force: true, recursive: true });
      removed += 1;
      left -= 1;
    }
    // Only an empty folder goes: a part arriving meanwhile keeps it.
    if (left === 0) await rmdir(dir).catch(() => {});
  }
  return removed;
}
