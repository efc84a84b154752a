/**
 * The kernel's limits on names and paths, as workspace rules. Linux refuses a name
 * longer than `NAME_MAX` (255 bytes) and a path argument of `PATH_MAX` (4096 bytes,
 * the terminating NUL included) or more with `ENAMETOOLONG`. Node's `fs` is
 * path-based, so the limit that matters is the whole host path: the workspace root,
 * a slash, and the workspace-relative path, counted in UTF-8 bytes.
 *
 * A command can still make deeper trees (it works relative to its current
 * directory); what lies beyond the limit is refused by the file actions and by sync,
 * and removed as a whole by `remove-tree.ts`. Everything here is pure.
 *
 * @module
 */

import { WorkbenchError } from '../contract/index.js';

/** Longest file or directory name, bytes (Linux `NAME_MAX`). */
export const NAME_MAX_BYTES = 255;

/** Size of a path argument the kernel accepts, NUL included, bytes (Linux `PATH_MAX`). */
export const PATH_MAX_BYTES = 4096;

/** Characters of a path kept by {@link truncateForReport}. */
const REPORT_HEAD_CHARS = 160;
const REPORT_TAIL_CHARS = 60;

/** Which limit a name or path is over. */
export type PathLimit = 'name_too_long' | 'path_too_long';

/** A name or path over a limit, as data. */
export interface PathLimitProblem {
  reason: PathLimit;
  /** The limit, bytes (255 for a name, 4096 for a path). */
  limit: number;
  /** The size of what is over it, bytes (a path's without its NUL). */
  bytes: number;
}

/** UTF-8 bytes of a string, as the kernel sees a Node path. */
export function utf8Bytes(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** The problem with one name (a single path component), or null when it fits. */
export function checkName(name: string): PathLimitProblem | null {
  const bytes = utf8Bytes(name);
  return bytes > NAME_MAX_BYTES ? { reason: 'name_too_long', limit: NAME_MAX_BYTES, bytes } : null;
}

/**
 * Whether a host path of `bytes` bytes fits in a path argument (there must be room
 * for the NUL).
 */
export function pathBytesFit(bytes: number): boolean {
  return bytes < PATH_MAX_BYTES;
}

/** The problem with a whole host path, or null when the kernel accepts it. */
export function checkHostPath(abs: string): PathLimitProblem | null {
  const bytes = utf8Bytes(abs);
  return pathBytesFit(bytes) ? null : { reason: 'path_too_long', limit: PATH_MAX_BYTES, bytes };
}

/**
 * A path short enough to show in a message or a report: long ones keep their start
 * and end around an ellipsis.
 */
export function truncateForReport(path: string): string {
  if (path.length <= REPORT_HEAD_CHARS + REPORT_TAIL_CHARS + 1) return path;
  return `${path.slice(0, REPORT_HEAD_CHARS)}…${path.slice(-REPORT_TAIL_CHARS)}`;
}

/**
 * The `invalid_path` refusal of a name or path over a limit. `path` is the caller's
 * path (shown truncated); the payload carries the reason, the limit and the size.
 */
export function pathLimitError(path: string, problem: PathLimitProblem): WorkbenchError {
  const shown = truncateForReport(path);
  const message =
    problem.reason === 'name_too_long'
      ? `invalid_path: "${shown}" has a name of ${problem.bytes} bytes; a file or directory name may have at most ${NAME_MAX_BYTES} bytes (NAME_MAX); use a shorter name`
      : `invalid_path: "${shown}" would be a ${problem.bytes}-byte path on the node's disk (the workspace root included); paths must be shorter than ${PATH_MAX_BYTES} bytes (PATH_MAX); use a shorter or shallower path`;
  return new WorkbenchError('invalid_path', message, { path: shown, ...problem });
}
