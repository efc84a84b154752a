/**
 * The worker's root must be a directory that exists when the worker starts: every
 * call acts inside it, so a missing or wrong root is refused at once, with what to do,
 * rather than answered `path_not_found` call after call.
 *
 * @module
 */

import { stat } from 'node:fs/promises';

/** Why `root` cannot be the worker's root, or `null` when it can. */
export async function workerRootProblem(root: string): Promise<string | null> {
  const st = await stat(root).catch((err: NodeJS.ErrnoException) => err);
  if (st instanceof Error) {
    const why =
      st.code === 'ENOENT' ? 'does not exist' : `cannot be read (${st.code ?? st.message})`;
    return `MEMQL_WORKER_ROOT=${JSON.stringify(root)} ${why}: set it to an existing directory of the files this worker may serve`;
  }
  if (!st.isDirectory()) {
    return `MEMQL_WORKER_ROOT=${JSON.stringify(root)} is not a directory: set it to the directory of the files this worker may serve`;
  }
  return null;
}
