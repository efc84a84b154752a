/**
 * The worker host's settings: the agent node it dials, its token, the directory it
 * serves, what it offers and how many calls it runs at once. Part of `CONFIG_VARIABLES`
 * (`variables.ts`), in the order the table lists them.
 *
 * @module
 */

import type { ConfigVariable } from './config-variable.js';

/** The variables of this part of the registry. */
export const WORKER_VARIABLES = [
  {
    name: 'MEMQL_WORKER_AGENT',
    default: undefined,
    defaultText: 'unset (the worker binary requires it)',
    type: '`host:port`; IPv6 in brackets',
    description:
      "Worker hosts only: the agent node's gRPC address the worker dials out to. Calls come down the worker's own connection, so its machine needs no open port. With `MEMQL_TLS_*` set the worker dials TLS, else plaintext.",
  },
  {
    name: 'MEMQL_WORKER_TOKEN',
    default: undefined,
    defaultText: 'unset (the worker binary requires it)',
    type: 'API token (printable characters, no whitespace)',
    description:
      'Worker hosts only: an API token of the user who owns the worker (`memql tokens create`), sent as `authorization: Bearer <token>`. A token the agent refuses stops the worker (exit 2). No command ever sees it.',
    secret: true,
  },
  {
    name: 'MEMQL_WORKER_ROOT',
    default: undefined,
    defaultText: 'unset (the worker binary requires it)',
    type: 'path (relative resolves against the working directory)',
    description:
      "Worker hosts only: the directory of the user's files the worker serves. Every path of a file action and every command's working directory is relative to it and may not leave it. It must exist and be a directory, or the worker refuses to start (exit 2).",
  },
  {
    name: 'MEMQL_WORKER_PROVIDES',
    default: undefined,
    defaultText:
      'unset: detected (`display` when the X11 or Wayland socket of `DISPLAY` / `WAYLAND_DISPLAY` exists, `gpu` when `/dev/nvidia0` or a `/dev/dri/renderD*` exists, `macos_tooling` on macOS with `/usr/bin/xcrun`, `user_files` always)',
    type: 'comma-separated needs: `display`, `gpu`, `macos_tooling`, `user_files`',
    description:
      'Worker hosts only: what the worker offers, instead of what it detects. A call whose environment hint needs more is refused (`environment_mismatch`).',
  },
  {
    name: 'MEMQL_WORKER_CAPACITY',
    default: '4',
    type: 'positive integer (calls)',
    description: 'Worker hosts only: calls the worker runs at once; more wait for a slot.',
  },
] as const satisfies readonly ConfigVariable[];
