/**
 * Why the exec allowlist refused a command, as data.
 *
 * @module
 */

/**
 * Why a command was refused. Stable strings: the dispatch layer puts them in the
 * `command_not_allowed` payload.
 *
 * - `not_allowed`: the program is not on the allowlist (shells never are).
 * - `dynamic_name`: the program name is only known at run time (`$a`, `${X}`, `$'..'`,
 *   a glob, a brace expansion, a tilde).
 * - `forbidden_builtin`: a builtin that runs strings or redefines names (`eval`, `.`...).
 * - `wrapper`: a program that runs another program which cannot be checked (`sudo`...).
 * - `unsafe_argument`: an allowed program with an option or script that makes it run
 *   other programs (`find -exec`, `sed` `e`, `awk` `system()`, `git -c`...).
 * - `dynamic_argument`: an argument only known at run time sits where it could be such
 *   an option, or is the code of a program whose code is checked.
 * - `sensitive_variable`: the command sets a variable that changes which program runs or
 *   injects code into one (`PATH`, `LD_PRELOAD`, `GIT_*`...).
 * - `function_definition`: the command defines a shell function.
 * - `unsupported_syntax`: syntax where the parser and POSIX sh may disagree, refused
 *   rather than guessed at (`((..))`, operators inside `[ ]`, backquotes in a
 *   here-document...).
 * - `parse_error`: the parser reports an error or a missing token.
 * - `limit_exceeded`: an analysis limit was reached (length, nodes, depth, positions, time).
 * - `path_mismatch`: a program given by path is not the system binary of that name.
 */
export type DenyReason =
  | 'not_allowed'
  | 'dynamic_name'
  | 'forbidden_builtin'
  | 'wrapper'
  | 'unsafe_argument'
  | 'dynamic_argument'
  | 'sensitive_variable'
  | 'function_definition'
  | 'unsupported_syntax'
  | 'parse_error'
  | 'limit_exceeded'
  | 'path_mismatch';

/** One refusal, located by offset; line and column are added by the caller. */
export interface Denial {
  readonly reason: DenyReason;
  /** The offending name, token or option, as written (shortened when long). */
  readonly name: string;
  /** Offset into the command string (UTF-16 code units). */
  readonly index: number;
  /** What happened and what to do instead, for the person or model reading it. */
  readonly message: string;
}

/** Shortens text for a denial's `name`: first line, at most 40 characters. */
export function shortName(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 40 ? `${line.slice(0, 37)}...` : line;
}

/** Builds a {@link Denial}. */
export function deny(reason: DenyReason, name: string, index: number, message: string): Denial {
  return { reason, name: shortName(name), index, message };
}
