/**
 * Where bash and sh read the same text differently. The parser knows bash; the command
 * runs under POSIX sh (dash): the walk (`analysis.ts`) asks these checks where the two
 * could part, and refuses instead of trusting the tree: shell operators inside `[ ]`
 * and `[[ ]]`, a here-document whose end the shell finds elsewhere, a line continuation
 * the parser reads as joining what the shell ends. Pure: a node and the source text.
 *
 * @module
 */

import { type Denial, deny } from './denial.js';
import type { ShellNode } from './shell-parser.js';
import { unquoteDelimiter } from './shell-words.js';

/** Subtrees inside `[ ]` whose text is data, not operators. */
const OPAQUE_IN_TEST = new Set([
  'command_substitution',
  'process_substitution',
  'string',
  'raw_string',
  'ansi_c_string',
  'translated_string',
  'expansion',
  'simple_expansion',
  'arithmetic_expansion',
]);
/** The characters sh reads as operators. */
const OPERATOR_CHARS = /[&|;<>()\n]/;

/** A refusal of syntax the two shells read differently; `why` says how. */
export function unsupported(name: string, index: number, why: string): Denial {
  return deny(
    'unsupported_syntax',
    name,
    index,
    `${why}; nothing ran. Rewrite it in plain POSIX sh.`,
  );
}

/** Refuses shell operators inside `[ ]` and `[[ ]]`, which sh would act on. */
export function checkTestOperators(node: ShellNode, source: string): Denial | null {
  const text = (n: ShellNode): string => source.slice(n.start, n.end);
  const bad = (index: number, token: string): Denial =>
    unsupported(token, index, `"${token}" inside a test expression is a shell operator to sh`);
  const work = node.children.slice(1, -1);
  for (const [from, to] of gapsOf(node)) {
    const m = OPERATOR_CHARS.exec(source.slice(from, to));
    if (m) return bad(from + m.index, m[0]);
  }
  while (work.length > 0) {
    const n = work.pop()!;
    if (OPAQUE_IN_TEST.has(n.type)) continue;
    if (n.children.length === 0) {
      const t = text(n);
      const at = n.named ? unescapedOperator(t) : OPERATOR_CHARS.test(t) ? 0 : -1;
      if (at !== -1) return bad(n.start + at, n.named ? t[at]! : t);
      continue;
    }
    for (const [from, to] of gapsOf(n)) {
      const m = OPERATOR_CHARS.exec(source.slice(from, to));
      if (m) return bad(from + m.index, m[0]);
    }
    work.push(...n.children);
  }
  return null;
}

/**
 * Checks a here-document: the end line must be where the shell finds it, with no
 * earlier line the shell would take as the end. Returns whether the delimiter is
 * quoted (the body is literal), or a refusal.
 */
export function checkHeredoc(node: ShellNode, source: string): boolean | Denial {
  const text = (n: ShellNode): string => source.slice(n.start, n.end);
  const start = node.children.find((c) => c.type === 'heredoc_start');
  const end = node.children.find((c) => c.type === 'heredoc_end');
  const body = node.children.find((c) => c.type === 'heredoc_body');
  const stripTabs = node.children.some((c) => c.type === '<<-');
  if (start === undefined || end === undefined) {
    return deny(
      'parse_error',
      text(node),
      node.start,
      'the here-document is incomplete; nothing ran.',
    );
  }
  const rawDelimiter = text(start);
  const quoted = /['"\\]/.test(rawDelimiter);
  const delimiter = unquoteDelimiter(rawDelimiter);
  const endLineStart = source.lastIndexOf('\n', end.start - 1) + 1;
  const lead = source.slice(endLineStart, end.start);
  const mismatch = (): Denial =>
    unsupported(
      rawDelimiter,
      start.start,
      'the here-document ends at a different line for the shell than for the parser',
    );
  if (text(end) !== delimiter || (lead !== '' && !(stripTabs && /^\t+$/.test(lead)))) {
    return mismatch();
  }
  const bodyText = source.slice(body?.start ?? endLineStart, endLineStart);
  const endsEarly = (t: string): boolean =>
    t.split('\n').some((line) => (stripTabs ? line.replace(/^\t+/, '') : line) === delimiter);
  if (endsEarly(bodyText) || (!quoted && endsEarly(bodyText.replace(/\\\n/g, '')))) {
    return mismatch();
  }
  return quoted;
}

/**
 * Why a line continuation between tokens is read differently by the parser and the
 * shell, or null. Inside a word it joins what the parser split; on a line of its own
 * the parser glues the next line to the previous command, while the shell has already
 * ended that command at the newline.
 */
export function continuationProblem(source: string, at: number): string | null {
  const before = source[at - 1];
  const after = source[at + 2];
  if (before !== undefined && after !== undefined && !/\s/.test(before) && !/\s/.test(after)) {
    return 'a line continuation inside a word joins text the parser read as two words';
  }
  let b = at - 1;
  while (source[b] === ' ' || source[b] === '\t') b -= 1;
  if (b < 0 || source[b] === '\n') {
    return 'a line continuation at the start of a line starts a new command for the shell';
  }
  return null;
}

/** The ranges of a node's text not covered by its children. */
export function gapsOf(node: ShellNode): [number, number][] {
  const gaps: [number, number][] = [];
  let pos = node.start;
  for (const child of node.children) {
    if (child.start > pos) gaps.push([pos, child.start]);
    pos = Math.max(pos, child.end);
  }
  if (node.end > pos) gaps.push([pos, node.end]);
  return gaps;
}

/** Offset of the first unescaped operator character in a word, or -1. */
function unescapedOperator(t: string): number {
  for (let i = 0; i < t.length; i += 1) {
    if (t[i] === '\\') {
      i += 1;
      continue;
    }
    if (OPERATOR_CHARS.test(t[i]!)) return i;
  }
  return -1;
}
