import { constants, type Stats } from 'node:fs';
import {
  lchown,
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  realpath,
  rm,
  rmdir,
  unlink,
} from 'node:fs/promises';
import { join } from 'node:path';
import { type ActionArgs, WorkbenchError } from '../contract/index.js';
import { isInsideRealRoot, type ResolvedPath, resolveWorkspacePath } from './safe-path.js';

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

/** One entry of an `fs_list` answer. */
export interface ListEntry {
  /** Workspace-relative path. */
  path: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  /** Bytes (for a symlink, the length of its target). */
  size: number;
  /** Modification time, milliseconds since the epoch. */
  mtimeMs: number;
}

function typeOf(st: Stats): ListEntry['type'] {
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

/**
 * Opens a resolved file with `O_NOFOLLOW` and checks, through the descriptor, that
 * what was opened really is inside the workspace: a component swapped for a link
 * after resolution is caught here. Files created outside by such a race are removed.
 */
async function openConfined(ctx: FileContext, target: ResolvedPath, flags: number, mode = 0o644) {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(target.abs, flags | constants.O_NOFOLLOW, mode);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw notAFile(target.rel, 'a symbolic link that changed while opening');
    if (code === 'ENOENT') throw notFound(target.rel);
    if (code === 'EISDIR') throw notAFile(target.rel, 'a directory');
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
  return handle;
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
 * workspace), the final component must not be a directory, and the descriptor is
 * checked to be inside. Used by `fs_write` and by `fetch`.
 */
export async function openForWrite(
  ctx: FileContext,
  path: string,
  opts: { append?: boolean; mode?: number } = {},
) {
  const target = await resolveWorkspacePath(ctx.root, path);
  if (target.stat?.isDirectory()) throw notAFile(target.rel, 'a directory');
  await makeParents(ctx, target.rel);
  const flags =
    constants.O_WRONLY | constants.O_CREAT | (opts.append ? constants.O_APPEND : constants.O_TRUNC);
  const handle = await openConfined(ctx, target, flags, opts.mode ?? 0o644);
  const st = await handle.stat();
  if (!st.isFile()) {
    await handle.close();
    throw notAFile(target.rel, 'not a regular file');
  }
  if (ctx.owner) await handle.chown(ctx.owner.uid, ctx.owner.gid).catch(() => {});
  return { target, handle, sizeBefore: target.stat?.size ?? 0 };
}

/** `fs_write`: creates parent directories, then writes, appends or replaces the file. */
export async function fsWrite(ctx: FileContext, args: ActionArgs<'fs_write'>) {
  const bytes = Buffer.from(args.content, args.encoding === 'base64' ? 'base64' : 'utf8');
  const probe = await resolveWorkspacePath(ctx.root, args.path);
  const existing = probe.stat?.isFile() ? probe.stat.size : 0;
  const finalSize = args.append ? existing + bytes.length : bytes.length;
  if (finalSize > ctx.maxWriteBytes) {
    throw new WorkbenchError(
      'payload_too_large',
      `payload_too_large: the file would be ${finalSize} bytes; the limit is ${ctx.maxWriteBytes}`,
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
 * other file action (no escape by `..`, absolute form or symlink). The caller closes
 * the handle. Used by `fs_read` and by `promote_artifact`.
 */
export async function openForRead(ctx: FileContext, path: string) {
  const target = await resolveWorkspacePath(ctx.root, path);
  if (target.stat === null) throw notFound(target.rel || path);
  if (target.stat.isDirectory()) throw notAFile(target.rel, 'a directory');
  const handle = await openConfined(ctx, target, constants.O_RDONLY);
  const st = await handle.stat();
  if (!st.isFile()) {
    await handle.close();
    throw notAFile(target.rel, 'not a regular file');
  }
  return { target, handle, size: st.size };
}

/** `fs_read`: a file or a byte range of it, as text or base64. */
export async function fsRead(ctx: FileContext, args: ActionArgs<'fs_read'>) {
  const target = await resolveWorkspacePath(ctx.root, args.path);
  if (target.stat === null) throw notFound(target.rel || args.path);
  if (target.stat.isDirectory()) throw notAFile(target.rel, 'a directory');
  const handle = await openConfined(ctx, target, constants.O_RDONLY);
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw notAFile(target.rel, 'not a regular file');
    const available = Math.max(0, st.size - args.offset);
    const want = args.length === undefined ? available : Math.min(args.length, available);
    if (want > ctx.maxReadBytes) {
      throw new WorkbenchError(
        'payload_too_large',
        `payload_too_large: reading ${want} bytes of "${target.rel}" exceeds the ${ctx.maxReadBytes}-byte limit; read it in parts with offset and length`,
        { path: target.rel, size: st.size, limit: ctx.maxReadBytes },
      );
    }
    const buf = Buffer.alloc(want);
    const { bytesRead } = await handle.read(buf, 0, want, args.offset);
    const data = buf.subarray(0, bytesRead);
    return {
      path: target.rel,
      encoding: args.encoding,
      content: data.toString(args.encoding === 'base64' ? 'base64' : 'utf8'),
      offset: args.offset,
      bytesRead,
      size: st.size,
      eof: args.offset + bytesRead >= st.size,
    };
  } finally {
    await handle.close();
  }
}

/** `fs_list`: a directory's entries (recursively when asked), never following links. */
export async function fsList(ctx: FileContext, args: ActionArgs<'fs_list'>) {
  const target = await resolveWorkspacePath(ctx.root, args.path, { allowRoot: true });
  if (target.stat === null && target.rel !== '') throw notFound(target.rel);
  const rootStat = target.stat ?? (await lstat(target.abs));
  if (!rootStat.isDirectory()) {
    throw new WorkbenchError('invalid_path', `invalid_path: "${target.rel}" is not a directory`, {
      path: target.rel,
    });
  }
  const entries: ListEntry[] = [];
  let truncated = false;
  const queue: string[] = [target.rel];
  while (queue.length > 0 && !truncated) {
    const dirRel = queue.shift()!;
    const names = (await readdir(dirRel === '' ? ctx.root : join(ctx.root, dirRel))).sort();
    for (const name of names) {
      const rel = dirRel === '' ? name : `${dirRel}/${name}`;
      const st = await lstat(join(ctx.root, rel)).catch(() => null);
      if (st === null) continue;
      if (entries.length >= args.limit) {
        truncated = true;
        break;
      }
      entries.push({ path: rel, type: typeOf(st), size: st.size, mtimeMs: Math.trunc(st.mtimeMs) });
      if (args.recursive && st.isDirectory()) queue.push(rel);
    }
  }
  return { path: target.rel || '.', entries, truncated };
}

/** `fs_delete`: a file or link, or a directory (a non-empty one only when `recursive`). */
export async function fsDelete(ctx: FileContext, args: ActionArgs<'fs_delete'>) {
  const target = await resolveWorkspacePath(ctx.root, args.path, { followFinal: false });
  if (target.stat === null) throw notFound(target.rel);
  if (!target.stat.isDirectory()) {
    await unlink(target.abs);
    return { path: target.rel, deleted: true, type: typeOf(target.stat) };
  }
  if (args.recursive) {
    // rm does not follow symbolic links: a link inside the tree is removed, not its target.
    await rm(target.abs, { recursive: true, force: true });
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
