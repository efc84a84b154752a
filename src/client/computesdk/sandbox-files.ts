/**
 * `sandbox.filesystem` of a workbench sandbox, on the file actions: `fs_read`,
 * `fs_write`, `fs_list` and `fs_delete`, every path through {@link workspacePath}.
 * `mkdir` runs `mkdir -p` in the sandbox (an `exec`): the file actions make parent
 * directories as they write, and a directory with no file in it is not kept durably,
 * but it is there for the run's next calls while the run's copy stays warm, as a
 * caller who made it expects.
 *
 * @module
 */

import type { FileEntry } from '@computesdk/provider';
import {
  type ExecPayload,
  type FsListEntry,
  type FsListPayload,
  type FsReadPayload,
  MAX_FILE_WRITE_BYTES,
} from '../../contract/index.js';
import { ClientError } from '../client-error.js';
import { call, type WorkbenchSandbox } from './sandbox-calls.js';
import { commandLine, workspacePath } from './workspace-paths.js';

/** Bytes one `fs_read` asks for: the node's read limit (`MAX_READ_BYTES`, 8 MiB). */
const READ_CHUNK_BYTES = 8 * 1024 * 1024;

/** Most entries `readdir` lists (`fs_list`'s own ceiling). */
const MAX_LIST_ENTRIES = 10_000;

/** Whether `err` is a refusal with `code`. */
function isCode(err: unknown, code: string): boolean {
  return err instanceof ClientError && err.code === code;
}

/** The whole file as UTF-8 text, read in parts of at most the node's read limit. */
export async function readFile(sandbox: WorkbenchSandbox, path: string): Promise<string> {
  const rel = workspacePath(path);
  const parts: Buffer[] = [];
  for (let offset = 0; ; ) {
    const read = await call<FsReadPayload>(sandbox, 'fs_read', {
      path: rel,
      encoding: 'base64',
      offset,
      length: READ_CHUNK_BYTES,
    });
    parts.push(Buffer.from(read.content, 'base64'));
    offset += read.bytesRead;
    if (read.eof || read.bytesRead === 0) break;
  }
  return Buffer.concat(parts).toString('utf8');
}

/**
 * Creates or replaces the file, parents made: one `fs_write`, or a streamed upload
 * (`PUT /v1/runs/:runId/files`) when the text is over `fs_write`'s 32 MiB.
 */
export async function writeFile(
  sandbox: WorkbenchSandbox,
  path: string,
  content: string,
): Promise<void> {
  const rel = workspacePath(path);
  const bytes = Buffer.from(content, 'utf8');
  if (bytes.length > MAX_FILE_WRITE_BYTES) {
    await sandbox.client.uploadFile(sandbox.run.id, rel, bytes, {
      agentId: sandbox.agentId,
      taskId: sandbox.taskId,
    });
    return;
  }
  await call(sandbox, 'fs_write', { path: rel, content });
}

/** `mkdir -p` of the path in the sandbox; a refusal or non-zero exit is thrown. */
export async function mkdir(sandbox: WorkbenchSandbox, path: string): Promise<void> {
  const rel = workspacePath(path);
  const ran = await call<ExecPayload>(sandbox, 'exec', {
    command: commandLine(['mkdir', '-p', '--', rel]),
  });
  if (ran.exitCode !== 0) {
    throw new ClientError(
      'invalid_path',
      `invalid_path: mkdir -p "${rel}" exited ${ran.exitCode ?? ran.signal}: ${ran.stderr.trim()}`,
      null,
      { path: rel },
    );
  }
}

/** A listing entry as ComputeSDK's: a link or other entry counts as a file. */
function fileEntry(entry: FsListEntry): FileEntry {
  return {
    name: entry.path.slice(entry.path.lastIndexOf('/') + 1),
    type: entry.type === 'directory' ? 'directory' : 'file',
    size: entry.size,
    modified: new Date(entry.mtimeMs),
  };
}

/**
 * The directory's entries (not recursive). Over 10,000 entries is `payload_too_large`:
 * `fs_list` has no cursor, and a partial listing would look whole.
 */
export async function readdir(sandbox: WorkbenchSandbox, path: string): Promise<FileEntry[]> {
  const rel = workspacePath(path);
  const listed = await call<FsListPayload>(sandbox, 'fs_list', {
    path: rel,
    limit: MAX_LIST_ENTRIES,
  });
  if (listed.truncated) {
    throw new ClientError(
      'payload_too_large',
      `payload_too_large: "${rel}" has more than ${MAX_LIST_ENTRIES} entries; list its subdirectories, or run ls through runCommand`,
      null,
      { path: rel, limit: MAX_LIST_ENTRIES },
    );
  }
  return listed.entries.map(fileEntry);
}

/**
 * Whether anything is at the path: a one-byte `fs_read` (a file), else, when the path
 * is no regular file, an `fs_list` of it (a directory). `path_not_found` is false;
 * a path neither can open (outside the workspace, a socket) is thrown.
 */
export async function exists(sandbox: WorkbenchSandbox, path: string): Promise<boolean> {
  const rel = workspacePath(path);
  try {
    await call(sandbox, 'fs_read', { path: rel, length: 1 });
    return true;
  } catch (err) {
    if (isCode(err, 'path_not_found')) return false;
    if (!isCode(err, 'invalid_path')) throw err;
  }
  try {
    await call(sandbox, 'fs_list', { path: rel, limit: 1 });
    return true;
  } catch (err) {
    if (isCode(err, 'path_not_found')) return false;
    throw err;
  }
}

/** Removes a file or a whole directory tree, as `rm -rf`: a missing path is no error. */
export async function remove(sandbox: WorkbenchSandbox, path: string): Promise<void> {
  const rel = workspacePath(path);
  try {
    await call(sandbox, 'fs_delete', { path: rel, recursive: true });
  } catch (err) {
    if (!isCode(err, 'path_not_found')) throw err;
  }
}
