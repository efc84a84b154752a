import type { Stats } from 'node:fs';
import { lstat, readlink } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { WorkbenchError } from '../contract/index.js';
import { checkHostPath, checkName, pathLimitError } from './path-limits.js';

/** Symlink hops followed while resolving one path before it counts as a loop. */
const MAX_LINK_HOPS = 40;

/** A workspace path after resolution: where it is on the host and what is there. */
export interface ResolvedPath {
  /** Absolute host path; always the workspace root or strictly below it. */
  abs: string;
  /** The normalized workspace-relative path (`''` for the root itself). */
  rel: string;
  /** `lstat` of the final component, or null when it does not exist. */
  stat: Stats | null;
}

/** Options of {@link resolveWorkspacePath}. */
export interface ResolveOptions {
  /**
   * Follow a symlink in the final component (default true). Deletion and listing act
   * on the link itself, so they pass false.
   */
  followFinal?: boolean;
  /** Accept the workspace root itself (`.`); default false. */
  allowRoot?: boolean;
}

function invalid(input: string, why: string): WorkbenchError {
  return new WorkbenchError(
    'invalid_path',
    `invalid_path: "${input}" ${why}; use a path relative to the workspace root that stays inside it`,
    { path: input },
  );
}

/**
 * Splits a caller's path into components, refusing what is never a workspace path:
 * empty, absolute, a NUL byte, or a name over `NAME_MAX` (255 bytes).
 */
export function splitWorkspacePath(input: string): string[] {
  if (input.length === 0) throw invalid(input, 'is empty');
  if (input.includes('\0')) throw invalid(input.replace(/\0/g, '\\0'), 'contains a NUL byte');
  if (input.startsWith('/')) throw invalid(input, 'is absolute');
  const parts = input.split('/').filter((c) => c !== '' && c !== '.');
  for (const part of parts) {
    const problem = checkName(part);
    if (problem) throw pathLimitError(input, problem);
  }
  return parts;
}

/**
 * Refuses, from the text alone, a path that can name no file of the workspace: what
 * {@link splitWorkspacePath} refuses, and a path whose `..` climbs above the root or
 * that ends at the root itself (`a/..`). Links are not followed here: a path that
 * passes is resolved again, links and all, when it is used. For paths checked before
 * anything runs (an `exec`'s expected outputs), so that `../x` is refused as `/x` is.
 */
export function checkWorkspaceFilePath(input: string): void {
  let depth = 0;
  for (const part of splitWorkspacePath(input)) {
    depth += part === '..' ? -1 : 1;
    if (depth < 0) throw invalid(input, 'climbs above the workspace root');
  }
  if (depth === 0) throw invalid(input, 'names the workspace root itself');
}

/**
 * Resolves a workspace-relative path component by component, the way the kernel
 * would, but confined: `..` may not climb above the root, and every symlink met on
 * the way is read and followed only while its target stays inside the workspace
 * (absolute link targets never do: inside the sandbox the workspace is mounted
 * elsewhere, so they point at host paths). There is no string-prefix comparison:
 * containment holds because every component is a real directory entry under the
 * root. Missing components are allowed (the file may be about to be created); the
 * result's `stat` is null then. A name over 255 bytes, or a host path (root
 * included) of 4096 bytes or more, is `invalid_path` naming the limit
 * (`path-limits.ts`).
 */
export async function resolveWorkspacePath(
  root: string,
  input: string,
  options: ResolveOptions = {},
): Promise<ResolvedPath> {
  const followFinal = options.followFinal ?? true;
  const pending = splitWorkspacePath(input);
  const resolved: string[] = [];
  let hops = 0;
  // Index in `resolved` of the first component that does not exist; -1 while all do.
  let missingAt = -1;
  let stat: Stats | null = null;

  while (pending.length > 0) {
    const part = pending.shift()!;
    const isFinal = pending.length === 0;
    if (part === '.') continue;
    if (part === '..') {
      if (resolved.length === 0) throw invalid(input, 'climbs above the workspace root');
      resolved.pop();
      // A missing component is no link, so stepping back over it is exact.
      if (missingAt >= resolved.length) missingAt = -1;
      stat = null;
      continue;
    }
    // A link's target may hold any name; the caller's own were checked by the split.
    const badName = checkName(part);
    if (badName) throw pathLimitError(input, badName);
    if (missingAt >= 0) {
      resolved.push(part);
      continue;
    }
    const here = join(root, ...resolved, part);
    const tooLong = checkHostPath(here);
    if (tooLong) throw pathLimitError(input, tooLong);
    let st: Stats;
    try {
      st = await lstat(here);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      missingAt = resolved.length;
      stat = null;
      resolved.push(part);
      continue;
    }
    if (st.isSymbolicLink() && (followFinal || !isFinal)) {
      hops += 1;
      if (hops > MAX_LINK_HOPS) throw invalid(input, 'has too many levels of symbolic links');
      const target = await readlink(here);
      if (target.startsWith('/')) {
        throw invalid(input, `goes through a symbolic link to an absolute path (${part})`);
      }
      pending.unshift(...target.split('/').filter((c) => c !== ''));
      continue;
    }
    if (!isFinal && !st.isDirectory()) {
      throw invalid(input, `goes through "${part}", which is not a directory`);
    }
    resolved.push(part);
    stat = st;
  }

  if (resolved.length === 0 && !options.allowRoot) {
    throw invalid(input, 'names the workspace root itself');
  }
  const abs = resolved.length === 0 ? root : join(root, ...resolved);
  const tooLong = checkHostPath(abs);
  if (tooLong) throw pathLimitError(input, tooLong);
  if (missingAt < 0 && stat === null && resolved.length > 0) stat = await lstat(abs);
  return { abs, rel: resolved.join('/'), stat: missingAt >= 0 ? null : stat };
}

/**
 * True when `realPath` (a path the kernel reported for an open descriptor) is the
 * real root or below it. Used after opening, to catch a component swapped for a
 * link between resolution and open.
 */
export function isInsideRealRoot(realRoot: string, realPath: string): boolean {
  return (
    realPath === realRoot || realPath.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep)
  );
}
