/**
 * Walks a parsed command line and decides it: every command position is found
 * (pipelines, lists, subshells, groups, substitutions of every kind, here-documents,
 * conditions and loop bodies, assignment values, redirection targets, test
 * expressions) and each one is checked by `checkInvocation`.
 *
 * The parser knows bash; the command runs under POSIX sh (dash). Where the two read the
 * same text differently, the walk refuses instead of trusting the tree:
 * - text the parser kept as plain text is scanned for substitutions the shell would run
 *   (backquotes in here-documents, quotes that are literal inside `"${x:-'..'}"`);
 * - `[ ]`/`[[ ]]` holding `&& || | ; < > ( )` or a newline (sh reads them as operators);
 * - `((..))` commands (nested subshells to sh);
 * - a here-document whose body holds a line the shell would take as its end;
 * - a comment that does not start a word, a line continuation inside a word;
 * - backslash escapes inside backquotes, and `$'..'` holding an escaped quote.
 * The checks that need more than a glance at one node are `dialect-checks.ts`; each
 * command position is read as the shell will run it by `command-position.ts`.
 *
 * The walk is iterative; the tree it walks is already bounded in size and depth.
 *
 * @module
 */

import { type Position, toInvocation } from './command-position.js';
import { type Denial, deny } from './denial.js';
import {
  checkHeredoc,
  checkTestOperators,
  continuationProblem,
  gapsOf,
  unsupported,
} from './dialect-checks.js';
import { checkInvocation, type InvocationPolicy } from './invocation.js';
import { sensitiveVariableRule } from './sensitive-variables.js';
import type { ShellNode } from './shell-parser.js';
import { findHiddenSubstitution } from './shell-words.js';

/** The outcome of analysing one command line. */
export type Analysis =
  | { readonly ok: true; readonly commands: readonly string[] }
  | { readonly ok: false; readonly denial: Denial };

/** What the analysis needs besides the tree. */
export interface AnalysisOptions extends InvocationPolicy {
  /** Most command positions (commands, declarations, tests) in one command line. */
  readonly maxCommandPositions: number;
}

/** How text at a point in the tree is read by the shell. */
interface Context {
  /** Inside double quotes or an unquoted here-document: quotes are literal, `$` is not. */
  readonly quoted: boolean;
  /** Inside a quoted here-document: nothing is expanded. */
  readonly literal: boolean;
  /** Inside arithmetic, where names are variables that can be assigned. */
  readonly arithmetic: boolean;
}

const FRESH: Context = { quoted: false, literal: false, arithmetic: false };

/** Named leaves that are never expanded text. */
const NOT_SCANNED = new Set(['comment', 'heredoc_start', 'heredoc_end']);
/** Leaves whose text is quoted by their own syntax (expanded, but `<(` is literal). */
const QUOTED_LEAVES = new Set(['string_content', 'heredoc_content', 'heredoc_body']);
/** Analyses a parsed command line. Pure: the tree and the options are all it reads. */
export function analyzeShell(source: string, root: ShellNode, options: AnalysisOptions): Analysis {
  let parseError: Denial | null = null;
  const denials: Denial[] = [];
  const positions: Position[] = [];
  const text = (n: ShellNode): string => source.slice(n.start, n.end);
  const refuse = (d: Denial | null): void => {
    if (d !== null) denials.push(d);
  };
  const hiddenSubstitution = (token: string, index: number): Denial =>
    deny(
      'unsupported_syntax',
      token,
      index,
      `the shell would run a command substitution "${token}" here that the check could not parse; nothing ran. If the text is meant literally, quote it (for a here-document, quote the delimiter: <<'EOF'); otherwise use $(...) where the check can see it.`,
    );

  const heredocQuoted = new Map<ShellNode, boolean>();
  const stack: { node: ShellNode; parent: ShellNode | null; ctx: Context }[] = [
    { node: root, parent: null, ctx: FRESH },
  ];
  while (stack.length > 0) {
    const { node, parent, ctx } = stack.pop()!;
    if (
      (node.type === 'ERROR' || node.missing) &&
      (parseError === null || node.start < parseError.index)
    ) {
      const raw = text(node);
      const lead = node.missing ? 0 : raw.length - raw.trimStart().length;
      parseError = deny(
        'parse_error',
        node.missing ? node.type : raw.trim() || node.type,
        node.start + lead,
        node.missing
          ? `the command is incomplete: "${node.type}" is missing here; nothing ran.`
          : 'the command does not parse as shell syntax here; nothing ran.',
      );
    }
    switch (node.type) {
      case 'command':
      case 'declaration_command':
      case 'unset_command':
        positions.push({ node, parent });
        break;
      case 'test_command':
        positions.push({ node, parent });
        refuse(checkTestOperators(node, source));
        break;
      case 'function_definition': {
        const name = node.children.find((c) => c.field === 'name');
        refuse(
          deny(
            'function_definition',
            name ? text(name) : 'function',
            node.start,
            'defining shell functions is not allowed (a function can shadow an allowed name); run the commands directly.',
          ),
        );
        break;
      }
      case 'compound_statement':
        if (node.children[0]?.type === '((') {
          refuse(
            unsupported(
              '((',
              node.start,
              '"((..))" is arithmetic to bash but nested subshells to sh',
            ),
          );
        }
        break;
      case 'variable_assignment': {
        const nameNode = node.children.find((c) => c.field === 'name');
        const varNode =
          nameNode?.type === 'subscript'
            ? nameNode.children.find((c) => c.field === 'name')
            : nameNode;
        if (varNode) refuse(sensitive(text(varNode), varNode.start));
        break;
      }
      case 'for_statement': {
        const variable = node.children.find((c) => c.field === 'variable');
        if (variable) refuse(sensitive(text(variable), variable.start));
        break;
      }
      case 'heredoc_redirect': {
        const outcome = checkHeredoc(node, source);
        if (typeof outcome === 'boolean') heredocQuoted.set(node, outcome);
        else refuse(outcome);
        break;
      }
      case 'comment': {
        const before = source[node.start - 1];
        if (before !== undefined && !' \t\n;&|()<>'.includes(before)) {
          refuse(unsupported('#', node.start, 'a "#" inside a word is not a comment to sh'));
        }
        break;
      }
      case 'ansi_c_string':
        if (text(node).slice(2, -1).includes("'")) {
          refuse(
            unsupported(
              text(node),
              node.start,
              "$'..' with an escaped quote ends at a different quote in sh",
            ),
          );
        }
        break;
      case 'command_substitution':
        if (node.children[0]?.type === '`' && /\\[\\`$"]/.test(text(node).slice(1, -1))) {
          refuse(
            unsupported(
              '`',
              node.start,
              'backslash escapes inside backquotes change the command the shell reads; use $(...)',
            ),
          );
        }
        break;
    }

    if (node.children.length === 0) {
      if (node.named && !ctx.literal) scanLeaf(node, ctx);
    } else {
      const inner = innerContext(node, ctx);
      if (!inner.literal) scanGaps(node, inner);
      for (let k = node.children.length - 1; k >= 0; k -= 1) {
        const child = node.children[k]!;
        const childCtx =
          node.type === 'heredoc_redirect' && child.type === 'heredoc_body'
            ? heredocQuoted.get(node) === false
              ? { ...FRESH, quoted: true }
              : { ...FRESH, literal: true }
            : inner;
        stack.push({ node: child, parent: node, ctx: childCtx });
      }
    }
    if (positions.length > options.maxCommandPositions) {
      return limitExceeded(node.start);
    }
  }

  if (parseError !== null) return { ok: false, denial: parseError };

  const commands: string[] = [];
  positions.sort((a, b) => a.node.start - b.node.start);
  for (const position of positions) {
    const invocation = toInvocation(position, source);
    if (invocation === null) continue;
    refuse(checkInvocation(invocation.name, invocation.args, options, commands));
  }
  if (denials.length > 0) {
    const first = denials.reduce((a, b) => (b.index < a.index ? b : a));
    return { ok: false, denial: first };
  }
  return { ok: true, commands };

  function limitExceeded(index: number): Analysis {
    return {
      ok: false,
      denial: deny(
        'limit_exceeded',
        'maxCommandPositions',
        index,
        `the command has more than ${options.maxCommandPositions} command positions; split it into smaller commands.`,
      ),
    };
  }

  function sensitive(name: string, index: number): Denial | null {
    const rule = sensitiveVariableRule(name);
    return rule
      ? deny('sensitive_variable', name, index, `setting ${name} is not allowed: ${rule.reason}.`)
      : null;
  }

  function innerContext(node: ShellNode, ctx: Context): Context {
    switch (node.type) {
      case 'string':
        return { ...ctx, quoted: true };
      case 'command_substitution':
      case 'process_substitution':
        return FRESH;
      case 'arithmetic_expansion':
      case 'c_style_for_statement':
        return { ...ctx, arithmetic: true };
      default:
        return ctx;
    }
  }

  /** Scans a leaf the parser kept as text for substitutions it did not see. */
  function scanLeaf(node: ShellNode, ctx: Context): void {
    if (NOT_SCANNED.has(node.type)) return;
    if (ctx.arithmetic && (node.type === 'variable_name' || node.type === 'word')) {
      refuse(sensitive(text(node), node.start));
    }
    if ((node.type === 'raw_string' || node.type === 'ansi_c_string') && !ctx.quoted) return;
    const hidden = findHiddenSubstitution(text(node), ctx.quoted || QUOTED_LEAVES.has(node.type));
    if (hidden !== null) refuse(hiddenSubstitution(hidden.token, node.start + hidden.offset));
  }

  /** Scans the text between a node's children (here-document text lives there). */
  function scanGaps(node: ShellNode, ctx: Context): void {
    const gaps = gapsOf(node);
    for (const [from, to] of gaps) {
      const gap = source.slice(from, to);
      const hidden = findHiddenSubstitution(gap, ctx.quoted);
      if (hidden !== null) refuse(hiddenSubstitution(hidden.token, from + hidden.offset));
      if (ctx.quoted) continue;
      for (let at = gap.indexOf('\\\n'); at !== -1; at = gap.indexOf('\\\n', at + 2)) {
        const why = continuationProblem(source, from + at);
        if (why !== null) refuse(unsupported('\\', from + at, why));
      }
    }
  }
}
