import { lstat, readdir, readFile } from 'node:fs/promises';
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
 * Pids of the processes of a run's sandboxes on a node running as root. A launch chain
 * started for the run names the workspace's host path (`<root>/<runId>`) among its own
 * arguments (its staging step), outside the sandbox; a sandbox of the warm pool was
 * started over another directory, renamed onto the run's when the run took it, so it is
 * found by its mounts instead: its staging namespace has a mount at the run's path (a
 * mount point follows its directory through a rename), and the sandbox's `/workspace` is
 * the same mount. A warm sandbox waiting for the run's next command is either kind.
 */
export async function sandboxProcessesOf(root: string, runId: string): Promise<number[]> {
  const dir = join(root, runId);
  const byArgs = await processesMatching(`\0${dir}\0`);
  const byMount = await processesMounting(dir);
  return [...new Set([...byArgs, ...byMount])].sort((a, b) => a - b);
}

/** Pids with a mount at `dir`, or at `/workspace` of the same device as such a mount. */
async function processesMounting(dir: string): Promise<number[]> {
  const mounts = new Map<number, string[][]>();
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const text = await readFile(`/proc/${name}/mountinfo`, 'utf8').catch(() => '');
    // Fields: id, parent id, major:minor, root, mount point, ...
    mounts.set(
      Number(name),
      text.split('\n').map((line) => line.split(' ')),
    );
  }
  const devices = new Set<string>();
  for (const lines of mounts.values()) {
    for (const f of lines) if (f[4] === dir && f[2]) devices.add(f[2]);
  }
  const found: number[] = [];
  for (const [pid, lines] of mounts) {
    const holds = lines.some(
      (f) => f[4] === dir || (f[4] === '/workspace' && devices.has(f[2] ?? '')),
    );
    if (holds) found.push(pid);
  }
  return found;
}
