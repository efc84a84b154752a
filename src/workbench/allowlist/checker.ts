/**
 * The exec allowlist: decides, before the shell ever sees it, whether a command line
 * for the `exec` action may run. Defence in depth; the sandbox is the boundary.
 *
 * The whole command is parsed (tree-sitter-bash), and every command position is
 * checked: each segment of pipelines and lists, subshells and groups, `$(..)`,
 * backquotes, `<(..)`/`>(..)`, substitutions inside double quotes, here-documents with
 * unquoted delimiters, arithmetic, assignments, redirection targets and test
 * expressions, function bodies and every part of `if`/`while`/`for`/`case`. One
 * refused position refuses the whole command; the dispatch layer answers
 * `command_not_allowed` with {@link denialPayload}, which lists the allowed programs.
 * The allowed programs are the defaults (`policy.ts`), those the runner's image
 * declares (`runnerPrograms`: LibreOffice, Poppler and ImageMagick on the docker
 * runner's `runner` image) and the operator's extras.
 *
 * Decisions (see the lists in `policy.ts` and the rules in `program-rules.ts`):
 * - Names are checked after unquoting: `"s"h` is `sh` (not allowed), `\sh` is `sh`.
 *   A name only known at run time is refused (`dynamic_name`).
 * - Function definitions are refused outright; their bodies are still checked.
 * - Checked wrappers (`env`, `timeout`, `nice`, `nohup`, `stdbuf`, `xargs`, `time`) are
 *   allowed when the program they run passes as a command of its own; other wrappers
 *   and the string-evaluating builtins are never allowed, whatever an operator adds.
 * - Allowed programs that can run commands through options or scripts are checked for
 *   the cheap cases: `find -exec`, sed `e`, awk `system()`/pipes, `git -c` and the git
 *   subcommands and config keys that run commands, `tar --to-command`...
 * - A program given by path passes only as an absolute path to the system binary of
 *   that name (same device and inode); relative paths are refused.
 * - Variables that pick or inject programs, or redirect a tool's configuration (`PATH`,
 *   `LD_*`, `GIT_*`, `HOME`, `XDG_*`...), may not be set (`sensitive-variables.ts`).
 *
 * Not covered, by design: interpreters (`python3 -c`, `node -e`, `go run`) run code;
 * configuration files in the workspace (`.git/config`, hooks) can make git run
 * programs; values only known at run time reach arithmetic and program arguments. The
 * sandbox holds all of these.
 *
 * @module
 */

import { analyzeShell } from './analysis.js';
import { type Denial, type DenyReason, shortName } from './denial.js';
import type { PathResolver } from './invocation.js';
import {
  DEFAULT_ALLOWED_PROGRAMS,
  FORBIDDEN_BUILTINS,
  SHELLS,
  UNCHECKED_WRAPPERS,
} from './policy.js';
import { loadShellParser } from './shell-parser.js';

export type { DenyReason } from './denial.js';
export type { PathResolution, PathResolver } from './invocation.js';
export { createSystemPathResolver, SYSTEM_BIN_DIRS } from './path-resolver.js';
export {
  CHECKED_WRAPPERS,
  DEFAULT_ALLOWED_PROGRAMS,
  FORBIDDEN_BUILTINS,
  SHELLS,
  UNCHECKED_WRAPPERS,
} from './policy.js';
export {
  isSensitiveVariable,
  SENSITIVE_VARIABLES,
  SETTABLE_VARIABLES,
  type SensitiveVariableRule,
  sensitiveVariableRule,
} from './sensitive-variables.js';

/** Bounds on the analysis of one command; reaching any of them refuses the command. */
export interface CommandCheckLimits {
  /** Longest command, in UTF-16 code units. Default 65,536 (the contract's maximum). */
  readonly maxCommandLength: number;
  /** Most syntax nodes. Default 50,000. */
  readonly maxNodes: number;
  /** Deepest syntax nesting. Default 256 (about 60 nested `$(..)`). */
  readonly maxDepth: number;
  /** Most command positions (commands, declarations, tests). Default 1,000. */
  readonly maxCommandPositions: number;
  /** Longest parse, in milliseconds. Default 1,000. */
  readonly maxParseMs: number;
}

/** The default {@link CommandCheckLimits}. */
export const DEFAULT_COMMAND_CHECK_LIMITS: CommandCheckLimits = {
  maxCommandLength: 64 * 1024,
  maxNodes: 50_000,
  maxDepth: 256,
  maxCommandPositions: 1_000,
  maxParseMs: 1_000,
};

/** Options of {@link createCommandChecker}. */
export interface CommandCheckerOptions {
  /**
   * Names added to the default allowlist (from `MEMQL_EXEC_ALLOWLIST_EXTRA`). Plain
   * program names only; a shell, a forbidden builtin or an unchecked wrapper is
   * rejected by {@link validateExtraAllowed} and makes creation throw.
   */
  readonly extraAllowed?: readonly string[];
  /**
   * Programs the runner's sandbox provides beyond the defaults, as its image declares
   * them (`Runner.providedPrograms`: the docker runner's `memql.runner.programs`
   * label). Unlike the operator's extras, a name that can never be allowed does not
   * stop the node: it is left out, and listed in {@link CommandChecker.refusedRunnerPrograms}.
   */
  readonly runnerPrograms?: readonly string[];
  /** Overrides of {@link DEFAULT_COMMAND_CHECK_LIMITS}. */
  readonly limits?: Partial<CommandCheckLimits>;
  /** Resolver for programs given by absolute path; without one they are refused. */
  readonly resolvePath?: PathResolver;
}

/** Per-call context of {@link CommandChecker.check}. */
export interface CheckContext {
  /** Overrides the checker's resolver for this call. */
  readonly resolvePath?: PathResolver;
}

/** Where a refusal points: an offset into the command, and its 1-based line and column. */
export interface CommandPosition {
  /** Offset in UTF-16 code units (JavaScript string index). */
  readonly index: number;
  /** 1-based line. */
  readonly line: number;
  /** 1-based column, in UTF-16 code units. */
  readonly column: number;
}

/** The decision on one command line. */
export type CheckResult =
  | {
      readonly ok: true;
      /** Every program and builtin the command runs, in source order, deduplicated. */
      readonly commands: string[];
    }
  | {
      readonly ok: false;
      readonly reason: DenyReason;
      /** The offending name, token or option as written (a limit's name for limits). */
      readonly name: string;
      readonly position: CommandPosition;
      /** What happened and what to do instead. */
      readonly message: string;
    };

/** A refused {@link CheckResult}. */
export type CheckDenied = Extract<CheckResult, { ok: false }>;

/** Checks command lines. `check` is synchronous and pure apart from the resolver. */
export interface CommandChecker {
  check(command: string, ctx?: CheckContext): CheckResult;
  /** The effective allowlist (defaults, the runner's programs and the operator's extras). */
  readonly allowed: ReadonlySet<string>;
  /** Names the runner declared that are not admitted, each with why (for the node's log). */
  readonly refusedRunnerPrograms: readonly string[];
}

/** The payload of a `command_not_allowed` error. */
export interface CommandNotAllowedPayload {
  readonly name: string;
  readonly position: CommandPosition;
  readonly reason: DenyReason;
  /** Every program and builtin a command may use here, sorted: what to use instead. */
  readonly allowed: readonly string[];
}

/** The `command_not_allowed` payload for a refused check by `checker`. */
export function denialPayload(
  result: CheckDenied,
  checker: Pick<CommandChecker, 'allowed'>,
): CommandNotAllowedPayload {
  return {
    name: result.name,
    position: result.position,
    reason: result.reason,
    allowed: [...checker.allowed].sort(),
  };
}

const NEVER = new Set([...FORBIDDEN_BUILTINS, ...UNCHECKED_WRAPPERS, ...SHELLS]);

/** Problems with operator-supplied extra names, one message each; empty when fine. */
export function validateExtraAllowed(names: readonly string[]): string[] {
  const problems: string[] = [];
  for (const name of names) {
    if (!/^[A-Za-z0-9_][A-Za-z0-9._+-]*$/.test(name)) {
      problems.push(`"${name}" is not a plain program name`);
    } else if (NEVER.has(name)) {
      problems.push(
        `"${name}" can never be allowed (a shell, a string-evaluating builtin or a wrapper)`,
      );
    }
  }
  return problems;
}

/** Position of `index` in `source`, with 1-based line and column. */
export function positionOf(source: string, index: number): CommandPosition {
  const before = source.slice(0, index);
  const lineStart = before.lastIndexOf('\n') + 1;
  let line = 1;
  for (const c of before) if (c === '\n') line += 1;
  return { index, line, column: index - lineStart + 1 };
}

// Control characters other than tab and newline: the shell and the parser disagree on them.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/;

/**
 * Loads the bash grammar (once per process) and returns a checker for the default
 * allowlist plus `extraAllowed`.
 */
export async function createCommandChecker(
  options: CommandCheckerOptions = {},
): Promise<CommandChecker> {
  const extra = options.extraAllowed ?? [];
  const problems = validateExtraAllowed(extra);
  if (problems.length > 0) {
    throw new Error(`exec allowlist extras refused: ${problems.join('; ')}`);
  }
  const limits = { ...DEFAULT_COMMAND_CHECK_LIMITS, ...options.limits };
  const runner = (options.runnerPrograms ?? []).map((name) => ({
    name,
    problems: validateExtraAllowed([name]),
  }));
  const allowed: ReadonlySet<string> = new Set([
    ...DEFAULT_ALLOWED_PROGRAMS,
    ...runner.filter((r) => r.problems.length === 0).map((r) => r.name),
    ...extra,
  ]);
  const refusedRunnerPrograms = runner.flatMap((r) => r.problems);
  const parser = await loadShellParser();

  const refuse = (source: string, d: Denial): CheckDenied => ({
    ok: false,
    reason: d.reason,
    name: d.name,
    position: positionOf(source, d.index),
    message: d.message,
  });

  return {
    allowed,
    refusedRunnerPrograms,
    check(command, ctx) {
      if (command.length > limits.maxCommandLength) {
        return refuse(command, {
          reason: 'limit_exceeded',
          name: 'maxCommandLength',
          index: limits.maxCommandLength,
          message: `the command is longer than ${limits.maxCommandLength} characters; shorten it or write a script file and run it with an allowed interpreter.`,
        });
      }
      const control = CONTROL.exec(command);
      if (control !== null) {
        return refuse(command, {
          reason: 'unsupported_syntax',
          name: `\\u${control[0].charCodeAt(0).toString(16).padStart(4, '0')}`,
          index: control.index,
          message:
            'the command holds a control character, which the shell and the parser read differently; remove it.',
        });
      }
      const parsed = parser.parse(command, limits);
      if (!parsed.ok) {
        return refuse(command, {
          reason: 'limit_exceeded',
          name: parsed.limit,
          index: parsed.index,
          message: `the command is too complex to analyse (${parsed.limit} reached); split it into smaller commands.`,
        });
      }
      const resolvePath = ctx?.resolvePath ?? options.resolvePath;
      const analysis = analyzeShell(command, parsed.root, {
        allowed,
        maxCommandPositions: limits.maxCommandPositions,
        ...(resolvePath ? { resolvePath } : {}),
      });
      if (!analysis.ok)
        return refuse(command, { ...analysis.denial, name: shortName(analysis.denial.name) });
      return { ok: true, commands: [...new Set(analysis.commands)] };
    },
  };
}
