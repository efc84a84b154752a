/**
 * The working directory of a command, and the ownership of the workspace directory.
 *
 * @module
 */

import { lchown, lstat, stat } from 'node:fs/promises';
import { isAbsolute, join, posix } from 'node:path';
import { WorkbenchError } from '../contract/index.js';

/**
 * Normalises a command's working directory, relative to the workspace root (`.` when
 * absent). The caller already checked it; this refuses, again, an absolute path or one
 * that climbs out, because the result is joined to a host path.
 */
export function resolveCwd(cwd: string | undefined): string {
  const raw = cwd ?? '.';
  if (raw.includes('\0') || posix.isAbsolute(raw) || isAbsolute(raw)) {
    throw new WorkbenchError(
      'invalid_path',
      `invalid_path: cwd ${JSON.stringify(raw)} must be a path relative to the workspace`,
    );
  }
  const normal = posix.normalize(raw);
  if (normal === '..' || normal.startsWith('../')) {
    throw new WorkbenchError(
      'invalid_path',
      `invalid_path: cwd ${JSON.stringify(raw)} leaves the workspace`,
    );
  }
  return normal.replace(/\/+$/, '') || '.';
}

/**
 * Checks that the working directory exists (on the host: a prerequisite, not a security
 * check; inside the sandbox it is resolved again, within the sandbox's own view).
 */
export async function requireCwdDirectory(workspaceDir: string, cwd: string): Promise<void> {
  const info = await stat(join(workspaceDir, cwd)).catch(() => null);
  if (!info?.isDirectory()) {
    throw new WorkbenchError(
      'path_not_found',
      `path_not_found: working directory ${JSON.stringify(cwd)} is not a directory in the workspace`,
    );
  }
}

/**
 * Makes the workspace root directory itself owned by `uid:gid`, so a command running as
 * that user can create files in it. Only the root directory, with `lchown`, and never
 * when it is a symbolic link: a recursive chown could be steered by a link a command
 * planted. Files the workspace layer creates or restores inside it must already belong
 * to `SANDBOX_UID`; files created by commands do, since commands run as that uid.
 */
export async function ownWorkspaceRoot(
  workspaceDir: string,
  uid: number,
  gid: number,
): Promise<void> {
  if (!isAbsolute(workspaceDir)) {
    throw new TypeError(`workspaceDir must be absolute, got ${JSON.stringify(workspaceDir)}`);
  }
  const st = await lstat(workspaceDir);
  if (!st.isDirectory()) {
    throw new Error(`workspaceDir ${workspaceDir} is not a directory (symbolic links are refused)`);
  }
  if (st.uid !== uid || st.gid !== gid) await lchown(workspaceDir, uid, gid);
}

/**
 * Readies a workspace for a command: its root owned by `owner` when one is given (see
 * {@link ownWorkspaceRoot}), and `cwd` a directory in it. Owning the root has just found
 * it a directory, so only a `cwd` below the root needs a look of its own then.
 */
export async function prepareCommandRoot(
  workspaceDir: string,
  cwd: string,
  owner: { uid: number; gid: number } | null,
): Promise<void> {
  if (owner !== null) await ownWorkspaceRoot(workspaceDir, owner.uid, owner.gid);
  if (cwd !== '.' || owner === null) await requireCwdDirectory(workspaceDir, cwd);
}
