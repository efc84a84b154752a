import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { processesMatching } from '../sandbox/sandbox-support.js';

/** Bytes of the regular files under `path` (links not followed); 0 when it is gone. */
export async function bytesUnder(path: string): Promise<number> {
  const st = await lstat(path).catch(() => null);
  if (st === null) return 0;
  if (st.isFile()) return st.size;
  if (!st.isDirectory()) return 0;
  let bytes = 0;
  for (const name of await readdir(path).catch(() => [] as string[])) {
    bytes += await bytesUnder(join(path, name));
  }
  return bytes;
}

/**
 * Bytes under a workbench root outside the live workspaces named: upload stages,
 * directories of ended runs, scratch directories, anything a node left.
 */
export async function bytesOutsideWorkspaces(
  root: string,
  live: readonly string[],
): Promise<number> {
  let bytes = 0;
  for (const name of await readdir(root).catch(() => [] as string[])) {
    if (!live.includes(name)) bytes += await bytesUnder(join(root, name));
  }
  return bytes;
}

/**
 * Pids of the host-side processes of a run's sandboxes on a node running as root: the
 * launch chain names the workspace's host path (`<root>/<runId>`) among its own
 * arguments (its staging step), outside the sandbox. A warm sandbox waiting for the
 * run's next command is such a chain.
 */
export function sandboxProcessesOf(root: string, runId: string): Promise<number[]> {
  return processesMatching(`\0${join(root, runId)}\0`);
}
