/**
 * Settings read under an old name: each is still read (unless its new name is set) and
 * warned about, so a deployment renames it before the old name goes.
 *
 * @module
 */

import type { ConfigWarning } from './config.js';
import type { Env } from './env-reader.js';

/** Variables read under an old name, with the new one. */
const RENAMED: readonly { old: string; now: string; why: string }[] = [
  {
    old: 'MEMQL_WORKER_CONCURRENCY',
    now: 'MEMQL_COMMAND_CONCURRENCY',
    why: '"worker" names the worker hosts',
  },
];

/** A warning for each old name set: read for now (unless the new one is set), to be renamed. */
export function renamedVariables(env: Env): ConfigWarning[] {
  return RENAMED.filter(({ old }) => env[old]?.trim()).map(({ old, now, why }) => ({
    variable: old,
    message: env[now]?.trim()
      ? `${old} is ignored: it is the old name of ${now}, which is set (${why}); remove it`
      : `${old} is the old name of ${now} (${why}); it is read for now: rename it`,
  }));
}
