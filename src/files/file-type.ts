/**
 * What kind of entry a workspace path names, and the refusal of anything the file
 * actions do not read or write. A workspace's contents are hostile input: opening a
 * FIFO blocks until a writer appears, and opening a device can do anything its
 * driver does, so the file actions only ever open regular files, and say what else
 * they found. Pure.
 *
 * @module
 */

import type { Stats } from 'node:fs';
import { WorkbenchError } from '../contract/index.js';
import { truncateForReport } from './path-limits.js';

/**
 * The type of a directory entry, from `lstat` or `fstat` (never following a link).
 * `device` covers character and block devices.
 */
export type FileType = 'file' | 'directory' | 'symlink' | 'fifo' | 'socket' | 'device' | 'unknown';

/** The type of an entry from its stats. */
export function fileTypeOf(
  st: Pick<
    Stats,
    | 'isFile'
    | 'isDirectory'
    | 'isSymbolicLink'
    | 'isFIFO'
    | 'isSocket'
    | 'isCharacterDevice'
    | 'isBlockDevice'
  >,
): FileType {
  if (st.isFile()) return 'file';
  if (st.isDirectory()) return 'directory';
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isFIFO()) return 'fifo';
  if (st.isSocket()) return 'socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'device';
  return 'unknown';
}

const WORDS: Record<FileType, string> = {
  file: 'a regular file',
  directory: 'a directory',
  symlink: 'a symbolic link',
  fifo: 'a FIFO (named pipe)',
  socket: 'a socket',
  device: 'a device node',
  unknown: 'an entry of an unknown type',
};

/**
 * The `invalid_path` refusal of a path that is not a regular file. The payload names
 * the type (`fileType`), so a caller can tell a FIFO from a directory without reading
 * the message.
 */
export function notARegularFile(path: string, type: FileType): WorkbenchError {
  const shown = truncateForReport(path);
  const advice =
    type === 'directory'
      ? 'list it with fs_list'
      : 'file actions read and write regular files only; remove it with fs_delete if it is in the way';
  return new WorkbenchError(
    'invalid_path',
    `invalid_path: "${shown}" is ${WORDS[type]}, not a regular file; ${advice}`,
    { path: shown, fileType: type },
  );
}
