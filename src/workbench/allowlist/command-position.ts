/**
 * A command position the walk (`analysis.ts`) found, read as the shell will run it:
 * the program's name and its arguments, words after a redirection included.
 *
 * @module
 */

import type { ShellNode } from './shell-parser.js';
import { decodeWord, type Word } from './shell-words.js';

/** A command position found by the walk. */
export interface Position {
  readonly node: ShellNode;
  readonly parent: ShellNode | null;
}

/** The program name and arguments at a command position, or null when it runs nothing. */
export function toInvocation(
  { node, parent }: Position,
  source: string,
): { name: Word; args: Word[] } | null {
  const word = (n: ShellNode): Word => decodeWord(n, source);
  const keyword = (n: ShellNode): Word => {
    const t = source.slice(n.start, n.end);
    return { value: { kind: 'literal', text: t }, index: n.start, raw: t };
  };
  if (node.type === 'test_command') {
    const open = node.children[0];
    return open === undefined ? null : { name: keyword(open), args: [] };
  }
  if (node.type === 'declaration_command' || node.type === 'unset_command') {
    const head = node.children[0];
    if (head === undefined) return null;
    const args = node.children
      .slice(1)
      .filter((c) => c.named && c.type !== 'variable_assignment' && c.type !== 'comment')
      .map(word);
    return { name: keyword(head), args };
  }
  const nameField = node.children.find((c) => c.field === 'name');
  if (nameField === undefined) return null;
  const nameNode =
    nameField.type === 'command_name' && nameField.children.length === 1
      ? nameField.children[0]!
      : nameField;
  const argNodes = node.children.filter((c) => c.field === 'argument');
  const redirects = node.children.filter((c) => c.field === 'redirect');
  if (parent?.type === 'redirected_statement' && node.field === 'body') {
    redirects.push(...parent.children.filter((c) => c.field === 'redirect'));
  }
  // The parser files words written after a redirection under the redirection; the shell
  // passes them to the program as arguments.
  for (const redirect of redirects) {
    if (redirect.type === 'file_redirect') {
      argNodes.push(...redirect.children.filter((c) => c.field === 'destination').slice(1));
    } else if (redirect.type === 'heredoc_redirect') {
      argNodes.push(...redirect.children.filter((c) => c.field === 'argument'));
    }
  }
  argNodes.sort((a, b) => a.start - b.start);
  return { name: word(nameNode), args: argNodes.map(word) };
}
