/**
 * Decides one invocation: a program name and its arguments, both decoded. Pure; the
 * only outside fact it needs (whether a path names the system binary) comes through an
 * injected {@link PathResolver}.
 *
 * Order: a name known only at run time is refused; then the never-lists (forbidden
 * builtins, unchecked wrappers, shells); checked wrappers hand their program back to
 * this function; then the allowlist; then the program's argument rule; and last, for a
 * name given as a path, the resolver.
 *
 * @module
 */

import { type Denial, deny } from './denial.js';
import { FORBIDDEN_BUILTINS, SHELLS, UNCHECKED_WRAPPERS } from './policy.js';
import { PROGRAM_RULES } from './program-rules.js';
import type { Word } from './shell-words.js';
import { isCheckedWrapper, unwrap } from './wrappers.js';

/** What the filesystem says about a program given by path. */
export interface PathResolution {
  /** True when the path is the very file the bare name runs from the system directories. */
  readonly sameAsSystemBinary: boolean;
  /** Why not, for the denial message. */
  readonly detail?: string;
}

/** Resolves an absolute program path against the system binary directories. */
export type PathResolver = (path: string) => PathResolution;

/** What an invocation is checked against. */
export interface InvocationPolicy {
  /** Allowed program and builtin names. */
  readonly allowed: ReadonlySet<string>;
  /** Resolver for names given as paths; without one, such names are refused. */
  readonly resolvePath?: PathResolver;
}

const FORBIDDEN = new Set(FORBIDDEN_BUILTINS);
const UNCHECKED = new Set(UNCHECKED_WRAPPERS);
const SHELL_NAMES = new Set(SHELLS);

/** Wrappers nest (`env timeout 5 nice ls`); past this depth the check fails closed. */
const MAX_WRAPPER_DEPTH = 8;

/** The part of a path after the last slash. */
function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/**
 * Checks one invocation. Names of programs that pass (including the ones wrappers run)
 * are appended to `commands`.
 */
export function checkInvocation(
  name: Word,
  args: readonly Word[],
  policy: InvocationPolicy,
  commands: string[],
  depth = 0,
): Denial | null {
  if (depth > MAX_WRAPPER_DEPTH) {
    return deny(
      'limit_exceeded',
      name.raw,
      name.index,
      `wrappers nest more than ${MAX_WRAPPER_DEPTH} deep; refused.`,
    );
  }
  if (name.value.kind === 'dynamic') {
    return deny(
      'dynamic_name',
      name.raw,
      name.index,
      `the program name "${name.raw}" is only known at run time (an expansion, glob, brace, tilde or $'..' quoting); write the program name literally.`,
    );
  }
  const written = name.value.text;
  const program = written.includes('/') ? baseName(written) : written;
  const denial = checkName(program, name, written);
  if (denial !== null) return denial;

  if (isCheckedWrapper(program)) {
    const outcome = unwrap(program, name, args);
    if (outcome.kind === 'deny') return outcome.denial;
    const pathDenial = checkPath(written, name, policy);
    if (pathDenial !== null) return pathDenial;
    commands.push(program);
    if (outcome.kind === 'none') return null;
    return checkInvocation(outcome.program, outcome.args, policy, commands, depth + 1);
  }

  if (!policy.allowed.has(program)) {
    return deny(
      'not_allowed',
      written,
      name.index,
      `"${program}" is not on the exec allowlist, so nothing ran; use an allowed program (the payload lists them), or ask an operator to add it.`,
    );
  }
  const rule = PROGRAM_RULES[program];
  const ruleDenial = rule === undefined ? null : rule(args, program);
  if (ruleDenial !== null) return ruleDenial;
  const pathDenial = checkPath(written, name, policy);
  if (pathDenial !== null) return pathDenial;
  commands.push(program);
  return null;
}

/** The never-lists, which no configuration changes. */
function checkName(program: string, name: Word, written: string): Denial | null {
  if (program === '') {
    return deny('not_allowed', written, name.index, 'the program name is empty; nothing ran.');
  }
  if (FORBIDDEN.has(program)) {
    return deny(
      'forbidden_builtin',
      written,
      name.index,
      `"${program}" runs strings as code or changes what names mean, so it is never allowed; run the commands directly.`,
    );
  }
  if (UNCHECKED.has(program)) {
    return deny(
      'wrapper',
      written,
      name.index,
      `"${program}" runs another program in a way that cannot be checked, so it is never allowed; run the program directly.`,
    );
  }
  if (SHELL_NAMES.has(program)) {
    return deny(
      'not_allowed',
      written,
      name.index,
      `"${program}" is a shell, which runs any string, so it is never allowed; write the commands directly.`,
    );
  }
  return null;
}

/**
 * A name given as a path must be an absolute path to the same file the bare name runs.
 * Relative paths are refused outright: they point into the workspace (or depend on the
 * current directory), which the command itself can change between check and run.
 */
function checkPath(written: string, name: Word, policy: InvocationPolicy): Denial | null {
  if (!written.includes('/')) return null;
  const program = baseName(written);
  if (!written.startsWith('/')) {
    return deny(
      'path_mismatch',
      written,
      name.index,
      `"${written}" is a relative program path; the workspace can change under the check, so only bare names and absolute paths to system binaries are accepted. Use "${program}".`,
    );
  }
  const resolution = policy.resolvePath?.(written);
  if (resolution === undefined) {
    return deny(
      'path_mismatch',
      written,
      name.index,
      `"${written}" cannot be checked here; use the bare name "${program}".`,
    );
  }
  if (!resolution.sameAsSystemBinary) {
    return deny(
      'path_mismatch',
      written,
      name.index,
      `"${written}" is not the system "${program}"${resolution.detail ? ` (${resolution.detail})` : ''}; use the bare name "${program}".`,
    );
  }
  return null;
}
