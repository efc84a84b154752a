/**
 * The file actions on a directory root: `fs_read`, `fs_list`, `fs_write`, `fs_delete`,
 * and the opens, placements and writes the workbench's other actions build on (fetch,
 * uploads, promoted artifacts). Every path goes through `safe-path.ts`: nothing
 * escapes the root, links included. The root is a run's workspace on a workbench, and
 * the user's chosen directory on a worker host.
 *
 * @module
 */

import { isUtf8 } from 'node:buffer';
import { constants, type Stats } from 'node:fs';
import {
  lchown,
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  realpath,
  rename,
  rmdir,
  unlink,
} from 'node:fs/promises';
import { join, posix } from 'node:path';
import {
  type ActionArgs,
  type FsDeletePayload,
  type FsListEntry,
  type FsListPayload,
  type FsReadPayload,
  type FsWritePayload,
  MAX_FILE_WRITE_BYTES,
  WorkbenchError,
} from '../contract/index.js';
import { type FileType, fileTypeOf, notARegularFile } from './file-type.js';
import { checkHostPath, type PathLimit, truncateForReport } from './path-limits.js';
import { removeTree } from './remove-tree.js';
import { isInsideRealRoot, type ResolvedPath, resolveWorkspacePath } from './safe-path.js';

/** Largest `fs_read` answer, bytes: big enough for source files, small enough for a tool result. */
export const MAX_READ_BYTES = 8 * 1024 * 1024;
/** The largest file `fs_write` makes: the contract's limit, which clients state up front. */
export const MAX_WRITE_BYTES = MAX_FILE_WRITE_BYTES;

/** What the file actions need to know about the workspace they act on. */
export interface FileContext {
  /** Host path of the workspace root. */
  root: string;
  /** Owner for files and directories the node creates, so sandboxed commands can change them. */
  owner?: { uid: number; gid: number };
  /** Largest `fs_read` answer in bytes; a larger range is `payload_too_large`. */
  maxReadBytes: number;
  /** Largest file `fs_write` may leave behind, in bytes. */
  maxWriteBytes: number;
}

/**
 * Every file action opens with these: never through a final symbolic link, and
 * never waiting. `O_NONBLOCK` makes opening a FIFO return at once (or fail with
 * `ENXIO` for writing with no reader) instead of blocking a file-system thread until
 * some process opens the other end; it changes nothing for a regular file. A type
 * swapped in after the `lstat` is caught by the `fstat` of the descriptor.
 */
const OPEN_FLAGS = constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

function typeOf(st: Stats): FsListEntry['type'] {
  if (st.isFile()) return 'file';
  if (st.isDirectory()) return 'directory';
  if (st.isSymbolicLink()) return 'symlink';
  return 'other';
}

function notFound(path: string): WorkbenchError {
  return new WorkbenchError(
    'path_not_found',
    `path_not_found: "${path}" does not exist in the workspace; list the directory with fs_list`,
    { path },
  );
}

function notAFile(path: string, what: string): WorkbenchError {
  return new WorkbenchError('invalid_path', `invalid_path: "${path}" is ${what}, not a file`, {
    path,
  });
}

/** The type of what is at `abs` now, without following a link or opening it. */
async function typeAt(abs: string): Promise<FileType> {
  const st = await lstat(abs).catch(() => null);
  return st === null ? 'unknown' : fileTypeOf(st);
}

/**
 * Opens a resolved path with {@link OPEN_FLAGS} and checks, through the descriptor,
 * that what was opened really is a regular file inside the workspace: a component
 * swapped for a link after resolution, or a file swapped for a FIFO, is caught here
 * without having blocked. Files created outside by such a race are removed.
 */
async function openConfined(ctx: FileContext, target: ResolvedPath, flags: number, mode = 0o644) {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(target.abs, flags | OPEN_FLAGS, mode);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw notAFile(target.rel, 'a symbolic link that changed while opening');
    if (code === 'ENOENT') throw notFound(target.rel);
    if (code === 'EISDIR') throw notARegularFile(target.rel, 'directory');
    // A FIFO with no reader (for writing), a socket, a device without a driver.
    if (code === 'ENXIO' || code === 'ENODEV' || code === 'EAGAIN' || code === 'EWOULDBLOCK') {
      throw notARegularFile(target.rel, await typeAt(target.abs));
    }
    throw err;
  }
  const real = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => null);
  const realRoot = await realpath(ctx.root);
  if (real === null || !isInsideRealRoot(realRoot, real)) {
    await handle.close();
    if (real !== null && (flags & constants.O_CREAT) !== 0 && target.stat === null) {
      await unlink(real).catch(() => {});
    }
    throw new WorkbenchError(
      'invalid_path',
      `invalid_path: "${target.rel}" left the workspace while it was being opened`,
      { path: target.rel },
    );
  }
  const st = await handle.stat();
  if (!st.isFile()) {
    await handle.close();
    throw notARegularFile(target.rel, fileTypeOf(st));
  }
  return { handle, st };
}

/** Refuses, by its `lstat`, a path that exists and is not a regular file: it is never opened. */
function refuseNonFile(target: ResolvedPath): void {
  if (target.stat !== null && !target.stat.isFile()) {
    throw notARegularFile(target.rel, fileTypeOf(target.stat));
  }
}

/** Creates the missing parent directories of `rel`, each checked again as it is made. */
async function makeParents(ctx: FileContext, rel: string): Promise<void> {
  const parts = rel.split('/').slice(0, -1);
  for (let i = 1; i <= parts.length; i++) {
    const dirRel = parts.slice(0, i).join('/');
    const dir = await resolveWorkspacePath(ctx.root, dirRel);
    if (dir.stat === null) {
      await mkdir(dir.abs).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
      const made = await lstat(dir.abs);
      if (!made.isDirectory()) throw notAFile(dirRel, 'not a directory');
      if (ctx.owner) await chownQuiet(dir.abs, ctx.owner);
    } else if (!dir.stat.isDirectory()) {
      throw new WorkbenchError(
        'invalid_path',
        `invalid_path: "${dirRel}" is a file, so "${rel}" cannot be created under it`,
        { path: rel },
      );
    }
  }
}

async function chownQuiet(path: string, owner: { uid: number; gid: number }): Promise<void> {
  await lchown(path, owner.uid, owner.gid).catch(() => {});
}

/**
 * Opens `path` for writing inside the workspace: parents are created (owned like the
 * workspace), the final component must be a regular file or missing (a directory,
 * FIFO, socket or device is refused by type, never opened), and the descriptor is
 * checked to be a regular file inside. Used by `fs_write` and by `fetch`.
 */
export async function openForWrite(
  ctx: FileContext,
  path: string,
  opts: { append?: boolean; mode?: number } = {},
) {
  const target = await resolveWorkspacePath(ctx.root, path);
  // A FIFO, socket or device is refused by type before anything opens it.
  refuseNonFile(target);
  await makeParents(ctx, target.rel);
  const flags =
    constants.O_WRONLY | constants.O_CREAT | (opts.append ? constants.O_APPEND : constants.O_TRUNC);
  const { handle } = await openConfined(ctx, target, flags, opts.mode ?? 0o644);
  if (ctx.owner) await handle.chown(ctx.owner.uid, ctx.owner.gid).catch(() => {});
  return { target, handle, sizeBefore: target.stat?.size ?? 0 };
}

/**
 * Puts the file at `source` (a host path outside the workspace, on the same file
 * system) at workspace path `path` in one rename, replacing a regular file or a link
 * there (a link is replaced, never followed). Parents are created like `fs_write`'s;
 * the rename goes through a descriptor of the parent directory checked to be inside
 * the workspace, so a parent swapped for a link after the checks cannot carry the file
 * out. Anything but a regular file, a link or nothing at `path` is refused by type.
 */
export async function placeFile(ctx: FileContext, path: string, source: string) {
  const target = await resolveWorkspacePath(ctx.root, path, { followFinal: false });
  if (target.stat !== null && !target.stat.isFile() && !target.stat.isSymbolicLink()) {
    throw notARegularFile(target.rel, fileTypeOf(target.stat));
  }
  await makeParents(ctx, target.rel);
  const parentRel = posix.dirname(target.rel);
  const parentAbs = parentRel === '.' ? ctx.root : join(ctx.root, parentRel);
  // The root is the node's own; every directory below it is opened without following a link.
  const flags = constants.O_RDONLY | constants.O_DIRECTORY;
  const parent = await open(parentAbs, parentRel === '.' ? flags : flags | OPEN_FLAGS).catch(
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ELOOP' || err.code === 'ENOTDIR' || err.code === 'ENOENT') {
        throw notAFile(parentRel, 'not a directory inside the workspace');
      }
      throw err;
    },
  );
  try {
    const real = await readlink(`/proc/self/fd/${parent.fd}`).catch(() => null);
    if (real === null || !isInsideRealRoot(await realpath(ctx.root), real)) {
      throw new WorkbenchError(
        'invalid_path',
        `invalid_path: "${target.rel}" left the workspace while it was being written`,
        { path: target.rel },
      );
    }
    try {
      await rename(source, `/proc/self/fd/${parent.fd}/${posix.basename(target.rel)}`);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EISDIR' || code === 'ENOTEMPTY' || code === 'EEXIST') {
        throw notARegularFile(target.rel, 'directory');
      }
      throw err;
    }
  } finally {
    await parent.close();
  }
  return target.rel;
}

/** `fs_write`: creates parent directories, then writes, appends or replaces the file. */
export async function fsWrite(
  ctx: FileContext,
  args: ActionArgs<'fs_write'>,
): Promise<FsWritePayload> {
  const bytes = Buffer.from(args.content, args.encoding === 'base64' ? 'base64' : 'utf8');
  const probe = await resolveWorkspacePath(ctx.root, args.path);
  const existing = probe.stat?.isFile() ? probe.stat.size : 0;
  const finalSize = args.append ? existing + bytes.length : bytes.length;
  if (finalSize > ctx.maxWriteBytes) {
    throw new WorkbenchError(
      'payload_too_large',
      `payload_too_large: the file would be ${finalSize} bytes; fs_write makes files of at most ${ctx.maxWriteBytes} bytes. Nothing was written: make a larger file from a command (exec) or download it (fetch)`,
      { path: probe.rel, size: finalSize, limit: ctx.maxWriteBytes },
    );
  }
  const { target, handle } = await openForWrite(ctx, args.path, {
    append: args.append,
    ...(args.mode === undefined ? {} : { mode: args.mode }),
  });
  try {
    await handle.writeFile(bytes);
    if (args.mode !== undefined) await handle.chmod(args.mode);
    const after = await handle.stat();
    return { path: target.rel, bytesWritten: bytes.length, size: after.size };
  } finally {
    await handle.close();
  }
}

/**
 * Opens an existing regular file of the workspace for reading, confined like every
 * other file action (no escape by `..`, absolute form or symlink). Anything but a
 * regular file is refused by type and never opened. The caller closes the handle.
 * Used by `fs_read` and by `promote_artifact`.
 */
export async function openForRead(ctx: FileContext, path: string) {
  const target = await resolveWorkspacePath(ctx.root, path);
  if (target.stat === null) throw notFound(target.rel || path);
  refuseNonFile(target);
  const { handle, st } = await openConfined(ctx, target, constants.O_RDONLY);
  return { target, handle, size: st.size };
}

/** `fs_read`: a file or a byte range of it, as text or base64. */
export async function fsRead(
  ctx: FileContext,
  args: ActionArgs<'fs_read'>,
): Promise<FsReadPayload> {
  const { target, handle, size } = await openForRead(ctx, args.path);
  try {
    const available = Math.max(0, size - args.offset);
    const want = args.length === undefined ? available : Math.min(args.length, available);
    if (want > ctx.maxReadBytes) {
      throw new WorkbenchError(
        'payload_too_large',
        `payload_too_large: reading ${want} bytes of "${target.rel}" exceeds the ${ctx.maxReadBytes}-byte limit; read it in parts with offset and length`,
        { path: target.rel, size, limit: ctx.maxReadBytes },
      );
    }
    const buf = Buffer.alloc(want);
    const { bytesRead } = await handle.read(buf, 0, want, args.offset);
    const data = buf.subarray(0, bytesRead);
    // Text is asked for by default: bytes that are not UTF-8 (a binary file, or a range
    // that cuts a character) come back as base64, flagged, never with replacement
    // characters.
    const binary = args.encoding === 'utf8' && !isUtf8(data);
    const encoding = binary ? 'base64' : args.encoding;
    return {
      path: target.rel,
      encoding,
      ...(binary ? { binary: true as const } : {}),
      content: data.toString(encoding === 'base64' ? 'base64' : 'utf8'),
      offset: args.offset,
      bytesRead,
      size,
      eof: args.offset + bytesRead >= size,
    };
  } finally {
    await handle.close();
  }
}

/** An entry `fs_list` found but could not describe: its host path is over `PATH_MAX`. */
export interface RefusedListEntry {
  /** Workspace-relative path, shortened around an ellipsis when long. */
  path: string;
  reason: PathLimit;
}

/**
 * `fs_list`: a directory's entries (recursively when asked), never following links.
 * Entries whose host path is too long for the kernel (a tree a command made deeper
 * than `PATH_MAX`) are not stat'ed or entered; they are named in `refused`, which is
 * present only when there are some, and count against the limit like entries.
 */
export async function fsList(
  ctx: FileContext,
  args: ActionArgs<'fs_list'>,
): Promise<FsListPayload> {
  const target = await resolveWorkspacePath(ctx.root, args.path, { allowRoot: true });
  if (target.stat === null && target.rel !== '') throw notFound(target.rel);
  const rootStat = target.stat ?? (await lstat(target.abs));
  if (!rootStat.isDirectory()) {
    throw new WorkbenchError('invalid_path', `invalid_path: "${target.rel}" is not a directory`, {
      path: target.rel,
    });
  }
  const entries: FsListEntry[] = [];
  const refused: RefusedListEntry[] = [];
  let truncated = false;
  const queue: string[] = [target.rel];
  while (queue.length > 0 && !truncated) {
    const dirRel = queue.shift()!;
    const names = (await readdir(dirRel === '' ? ctx.root : join(ctx.root, dirRel))).sort();
    for (const name of names) {
      const rel = dirRel === '' ? name : `${dirRel}/${name}`;
      const abs = join(ctx.root, rel);
      const tooLong = checkHostPath(abs);
      const st = tooLong ? null : await lstat(abs).catch(() => null);
      if (st === null && !tooLong) continue;
      if (entries.length + refused.length >= args.limit) {
        truncated = true;
        break;
      }
      if (st === null) {
        refused.push({ path: truncateForReport(rel), reason: 'path_too_long' });
        continue;
      }
      entries.push({ path: rel, type: typeOf(st), size: st.size, mtimeMs: Math.trunc(st.mtimeMs) });
      if (args.recursive && st.isDirectory()) queue.push(rel);
    }
  }
  return { path: target.rel || '.', entries, truncated, ...(refused.length ? { refused } : {}) };
}

/** `fs_delete`: a file or link, or a directory (a non-empty one only when `recursive`). */
export async function fsDelete(
  ctx: FileContext,
  args: ActionArgs<'fs_delete'>,
): Promise<FsDeletePayload> {
  const target = await resolveWorkspacePath(ctx.root, args.path, { followFinal: false });
  if (target.stat === null) throw notFound(target.rel);
  if (!target.stat.isDirectory()) {
    await unlink(target.abs);
    return { path: target.rel, deleted: true, type: typeOf(target.stat) };
  }
  if (args.recursive) {
    // Never follows a link (a link inside the tree is removed, not its target), and
    // reaches trees deeper than PATH_MAX.
    await removeTree(target.abs);
  } else {
    try {
      await rmdir(target.abs);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOTEMPTY') throw err;
      throw new WorkbenchError(
        'invalid_arguments',
        `invalid_arguments: "${target.rel}" is a directory that is not empty; pass recursive: true to delete it with everything in it`,
        { path: target.rel },
      );
    }
  }
  return { path: target.rel, deleted: true, type: 'directory' as const };
}
