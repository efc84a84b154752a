/**
 * Paths and command lines as ComputeSDK callers write them, turned into what the
 * workbench takes. A ComputeSDK sandbox is addressed with absolute paths; a run's
 * files live in its workspace, which commands see at `/workspace` and the file actions
 * address relative to its root. So `/workspace/src/a.ts` and `src/a.ts` are the same
 * file, and any other absolute path (`/tmp`, `/etc`) is outside what the workbench
 * keeps: `invalid_path`, before anything is sent.
 *
 * @module
 */

import { ClientError } from '../client-error.js';

/** Where the run's workspace is mounted in its sandbox. */
export const WORKSPACE_MOUNT = '/workspace';

/**
 * A ComputeSDK path as a workspace-relative one: relative paths as they are, the
 * workspace mount and paths under it made relative (`.` for the root), anything else
 * absolute refused with `invalid_path`. Traversal (`..`) is left to the server, which
 * refuses it with the same code.
 */
export function workspacePath(path: string): string {
  if (!path.startsWith('/')) return path === '' ? '.' : path;
  const trimmed = path.replace(/\/+$/, '');
  if (
    trimmed === '' ||
    !(trimmed === WORKSPACE_MOUNT || trimmed.startsWith(`${WORKSPACE_MOUNT}/`))
  ) {
    throw new ClientError(
      'invalid_path',
      `invalid_path: "${path}" is outside the run's workspace; only files under ${WORKSPACE_MOUNT} are kept, so use a path relative to it or starting with ${WORKSPACE_MOUNT}/`,
      null,
      { path },
    );
  }
  const rest = trimmed.slice(WORKSPACE_MOUNT.length).replace(/^\/+/, '');
  return rest === '' ? '.' : rest;
}

/**
 * One shell word: `value` in single quotes, a single quote in it closed, escaped and
 * reopened (`'\''`), so no character of it is special to the shell.
 */
export function shellQuote(value: string): string {
  if (/^[A-Za-z0-9_./=:@%+,-]+$/.test(value)) return value;
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * A program and its arguments as one command line, every word quoted: what
 * `sandbox.runCommand` takes when the caller holds an argv
 * (`commandLine(['ls', '-la', dir])`). The program must be on the allowlist.
 */
export function commandLine(argv: readonly string[]): string {
  if (argv.length === 0) {
    throw new ClientError('invalid_arguments', 'invalid_arguments: an empty command line');
  }
  return argv.map(shellQuote).join(' ');
}
