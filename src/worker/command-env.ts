/**
 * The environment a worker host's commands start from. A worker runs on its user's
 * own machine, as its user, so a command could reach anything the user can; what it
 * must not get by accident is the worker's own environment, which holds the user's
 * API token (`MEMQL_WORKER_TOKEN`) and whatever else the shell that started it had.
 * So the base is an allowlist of a few session variables, read from the worker's
 * environment by name; the call's own `args.env` goes on top (see `ProcessRunner`).
 *
 * @module
 */

import type { Need } from '../contract/index.js';

/** Variables every command gets from the worker's session, when set there. */
export const SESSION_VARIABLES = [
  'PATH',
  'HOME',
  'USER',
  'LANG',
  'LC_ALL',
  'TZ',
  'TMPDIR',
] as const;

/**
 * Variables that reach a display, passed only when the worker offers `display`: a
 * call that did not come here for the screen does not get it by default.
 */
export const DISPLAY_VARIABLES = ['DISPLAY', 'XAUTHORITY', 'WAYLAND_DISPLAY'] as const;

/**
 * The base environment of every command: {@link SESSION_VARIABLES}, and
 * {@link DISPLAY_VARIABLES} when `provides` has `display`, taken from `env` when set
 * to a value an environment can carry. Nothing else of `env` is read, so no
 * `MEMQL_*` variable, the token included, can reach a command through it. Pure.
 */
export function commandBaseEnv(
  env: Readonly<Record<string, string | undefined>>,
  provides: readonly Need[],
): Record<string, string> {
  const names: readonly string[] = provides.includes('display')
    ? [...SESSION_VARIABLES, ...DISPLAY_VARIABLES]
    : SESSION_VARIABLES;
  const base: Record<string, string> = {};
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value !== '' && !value.includes('\0')) base[name] = value;
  }
  return base;
}
