/**
 * Turns shell words from the syntax tree into the text the shell would pass, when that
 * text is fixed before the command runs.
 *
 * tree-sitter keeps words as source text. Here they are unquoted the way POSIX sh does
 * it: single quotes are literal, double quotes honour `\$ \` \" \\` and line
 * continuations, unquoted backslashes escape the next character. Anything whose value
 * is only known at run time (an expansion, a substitution, a glob, a brace expansion, a
 * tilde, an ANSI-C or translated string) is `dynamic`, with the literal text known to
 * precede it, so a caller can still tell whether the value could start with `-`.
 *
 * @module
 */

import type { ShellNode } from './shell-parser.js';

/** The value of a word: fixed text, or only known at run time. */
export type WordValue =
  | { readonly kind: 'literal'; readonly text: string }
  | {
      readonly kind: 'dynamic';
      /** The literal text known to come first (empty when the value starts dynamic). */
      readonly prefix: string;
    };

/** A decoded word and where it starts in the command string. */
export interface Word {
  readonly value: WordValue;
  /** Start offset of the word in the command string (UTF-16 code units). */
  readonly index: number;
  /** The word as written, for messages. */
  readonly raw: string;
}

const literal = (text: string): WordValue => ({ kind: 'literal', text });
const dynamic = (prefix: string): WordValue => ({ kind: 'dynamic', prefix });

/** Characters that, unquoted and unescaped, make a word something other than literal text. */
const UNQUOTED_SPECIAL = new Set([
  '$',
  '`',
  '*',
  '?',
  "'",
  '"',
  '(',
  ')',
  '|',
  '&',
  ';',
  '<',
  '>',
  ' ',
  '\t',
  '\n',
]);

/** Decodes a syntax node standing for one shell word. */
export function decodeWord(node: ShellNode, source: string): Word {
  const raw = source.slice(node.start, node.end);
  // Brace expansion needs a comma or `..` somewhere in the whole word (bash only).
  const braceRisk = raw.includes(',') || raw.includes('..');
  return { value: decodePart(node, source, true, braceRisk), index: node.start, raw };
}

function decodePart(
  node: ShellNode,
  source: string,
  atWordStart: boolean,
  braceRisk: boolean,
): WordValue {
  const text = source.slice(node.start, node.end);
  switch (node.type) {
    case 'word':
      return decodeUnquoted(text, atWordStart, braceRisk);
    case 'number':
      return /^[0-9]+$/.test(text) ? literal(text) : decodeUnquoted(text, atWordStart, braceRisk);
    case 'variable_name':
      return literal(text);
    case 'raw_string':
      return text.length >= 2 && text.endsWith("'") ? literal(text.slice(1, -1)) : dynamic('');
    case 'string':
      return decodeDoubleQuoted(node, source);
    case 'concatenation':
      return decodeConcatenation(node, source, braceRisk);
    default:
      // Expansions, substitutions, ANSI-C and translated strings, brace expressions,
      // and anything unknown: not fixed before the command runs.
      return dynamic('');
  }
}

function decodeConcatenation(node: ShellNode, source: string, braceRisk: boolean): WordValue {
  let text = '';
  let expected = node.start;
  for (const [i, part] of node.children.entries()) {
    if (part.start !== expected) return dynamic(text);
    expected = part.end;
    const value = decodePart(part, source, i === 0, braceRisk);
    if (value.kind === 'dynamic') return dynamic(text + value.prefix);
    text += value.text;
  }
  return expected === node.end ? literal(text) : dynamic(text);
}

/** Unquoted word text: backslash escapes, line continuations, and expansion markers. */
export function decodeUnquoted(text: string, atWordStart: boolean, braceRisk: boolean): WordValue {
  let out = '';
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (c === '\\') {
      const next = text[i + 1];
      if (next === undefined) {
        out += c;
      } else {
        if (next !== '\n') out += next;
        i += 1;
      }
      continue;
    }
    if (UNQUOTED_SPECIAL.has(c)) return dynamic(out);
    if (c === '~' && i === 0 && atWordStart) return dynamic(out);
    if (c === '[' && text.indexOf(']', i + 1) !== -1) return dynamic(out);
    if ((c === '{' || c === '}') && braceRisk) return dynamic(out);
    out += c;
  }
  return literal(out);
}

/** A double-quoted string: fixed only when it holds no expansion at all. */
function decodeDoubleQuoted(node: ShellNode, source: string): WordValue {
  const first = node.children[0];
  const last = node.children[node.children.length - 1];
  if (
    first?.type !== '"' ||
    last?.type !== '"' ||
    first === last ||
    first.start !== node.start ||
    last.end !== node.end
  ) {
    return dynamic('');
  }
  const inner = source.slice(first.end, last.start);
  let out = '';
  for (let i = 0; i < inner.length; i += 1) {
    const c = inner[i]!;
    if (c === '\\') {
      const next = inner[i + 1];
      if (next === '\n') {
        i += 1;
      } else if (next === '$' || next === '`' || next === '"' || next === '\\') {
        out += next;
        i += 1;
      } else {
        out += c;
      }
      continue;
    }
    if (c === '$' || c === '`') return dynamic(out);
    out += c;
  }
  return literal(out);
}

/** Where a hidden expansion starts, as found by {@link findHiddenSubstitution}. */
export interface HiddenSubstitution {
  /** Offset within the scanned text. */
  readonly offset: number;
  /** The token found: `` ` ``, `$(`, `<(` or `>(`. */
  readonly token: string;
}

/**
 * Looks for a command substitution the shell would run in text that the parser left as
 * plain text: an unescaped backquote or `$(`, and, in unquoted text, `<(` or `>(`.
 * `quoted` is for double-quoted and here-document text, where `<(` is literal.
 */
export function findHiddenSubstitution(text: string, quoted: boolean): HiddenSubstitution | null {
  const nextSignificant = (from: number): number => {
    let j = from;
    while (text[j] === '\\' && text[j + 1] === '\n') j += 2;
    return j;
  };
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (c === '\\') {
      i += 1;
      continue;
    }
    if (c === '`') return { offset: i, token: '`' };
    const opensParen = text[nextSignificant(i + 1)] === '(';
    if (c === '$' && opensParen) return { offset: i, token: '$(' };
    if (!quoted && (c === '<' || c === '>') && opensParen) return { offset: i, token: `${c}(` };
  }
  return null;
}

/**
 * Removes quoting from a here-document delimiter word, the way the shell does to find
 * the line that ends the body.
 */
export function unquoteDelimiter(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (c === "'") {
      const close = text.indexOf("'", i + 1);
      const end = close === -1 ? text.length : close;
      out += text.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      i += 1;
      for (; i < text.length && text[i] !== '"'; i += 1) {
        const d = text[i]!;
        const next = text[i + 1];
        if (d === '\\' && next !== undefined && '$`"\\\n'.includes(next)) {
          if (next !== '\n') out += next;
          i += 1;
        } else {
          out += d;
        }
      }
    } else if (c === '\\') {
      const next = text[i + 1];
      if (next !== undefined && next !== '\n') out += next;
      i += 1;
    } else {
      out += c;
    }
  }
  return out;
}

/** True when the value could begin with `-` (an option) once the shell has expanded it. */
export function couldBeOption(value: WordValue): boolean {
  return value.kind === 'literal'
    ? value.text.startsWith('-')
    : value.prefix === '' || value.prefix.startsWith('-');
}
