/**
 * Removes whatever tree a command left, however deep. Node's `fs.rm` works on whole
 * paths, so it fails with `ENAMETOOLONG` on a tree deeper than `PATH_MAX`, and a run
 * whose command made one could never be ended, deleted or evicted. GNU `rm -rf`
 * walks with directory descriptors (`openat`), so depth does not matter; it never
 * follows a symbolic link (a link is removed, not its target), checks each directory
 * it enters is the one it listed, and `--one-file-system` keeps it off any other
 * filesystem mounted inside.
 *
 * Entries are named relative to a parent directory that `rm` runs in, so an entry
 * whose own host path is too long to pass (one a scan refused) is still reachable
 * through its parent. Where no `rm` binary exists, `fs.rm` is used instead, which
 * handles every tree shallower than `PATH_MAX`. `rm` is started by a small helper
 * process (`host-helper.ts`), so the node does not fork itself for each removal.
 *
 * @module
 */

import { spawn } from 'node:child_process';
import { lstat, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { firstExecutable, HelperLost, hostHelpers } from './host-helper.js';

/** Where GNU coreutils' `rm` lives on the distributions the images use. */
const RM_CANDIDATES = ['/usr/bin/rm', '/bin/rm'];

/** Names passed to one `rm` process. */
const NAMES_PER_RM = 512;

/** Passes of `rm` over the same entries before its failure is thrown. */
const RM_ATTEMPTS = 3;

/** Bytes of `rm`'s stderr kept for an error message. */
const STDERR_KEEP = 2048;

let rmBinary: Promise<string | null> | undefined;

function findRm(): Promise<string | null> {
  rmBinary ??= firstExecutable(RM_CANDIDATES);
  return rmBinary;
}

function checkName(name: string): void {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
    throw new Error(`cannot remove ${JSON.stringify(name)}: not a single directory entry name`);
  }
}

async function runRm(binary: string, cwd: string, names: readonly string[]): Promise<void> {
  const answer = await hostHelpers.rm(binary, cwd, names).catch((err: unknown) => {
    // A helper that died is replaced at the next request; this one runs from here.
    if (err instanceof HelperLost) return null;
    throw err;
  });
  if (answer === null) return spawnRm(binary, cwd, names);
  if (answer.code !== 0) {
    throw new Error(`rm -rf in ${cwd} ended with ${answer.code}: ${answer.stderr.trim()}`);
  }
}

function spawnRm(binary: string, cwd: string, names: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, ['-rf', '--one-file-system', '--', ...names], {
      cwd,
      env: {},
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < STDERR_KEEP) stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else {
        reject(
          new Error(
            `rm -rf in ${cwd} ended with ${code ?? signal}: ${stderr.slice(0, STDERR_KEEP).trim()}`,
          ),
        );
      }
    });
  });
}

/**
 * Removes the entries `names` of the directory `parent` (files, links, FIFOs, whole
 * directory trees of any depth), never following a link. Names that do not exist,
 * and a missing `parent`, are fine. `parent` itself must be a path the kernel
 * accepts; the entries under it need not be.
 */
export async function removeEntriesOf(parent: string, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  for (const name of names) checkName(name);
  const st = await lstat(parent).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (st === null) return;
  if (!st.isDirectory()) throw new Error(`cannot remove entries of ${parent}: not a directory`);
  const binary = await findRm();
  for (let i = 0; i < names.length; i += NAMES_PER_RM) {
    const batch = names.slice(i, i + NAMES_PER_RM);
    if (binary === null) {
      for (const name of batch) await rm(join(parent, name), { recursive: true, force: true });
      continue;
    }
    // A process still writing in the tree (a command being cut off) can add an entry
    // behind rm's back; what is left is removed by another pass.
    for (let attempt = 1; ; attempt++) {
      try {
        await runRm(binary, parent, batch);
        break;
      } catch (err) {
        if (attempt >= RM_ATTEMPTS) throw err;
      }
    }
  }
}

/**
 * Removes `path` (a file, a link, or a directory with everything in it, at any
 * depth), never following a link. A missing path is fine.
 */
export function removeTree(path: string): Promise<void> {
  return removeEntriesOf(dirname(path), [basename(path)]);
}
