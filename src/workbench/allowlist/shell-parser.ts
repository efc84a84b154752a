/**
 * Parses a shell command line into a plain, bounded syntax tree.
 *
 * The grammar is tree-sitter-bash, run through web-tree-sitter (WebAssembly, no native
 * build). The grammar is loaded once per process; after that, parsing is synchronous.
 * The wasm tree is copied into plain {@link ShellNode} objects by an iterative cursor
 * walk that stops at the node-count and depth limits, and then freed, so the analysis
 * that follows is pure data and cannot overflow the stack on deeply nested input.
 *
 * tree-sitter does no unquoting and knows bash, not POSIX sh: the analysis in
 * `analysis.ts` decodes words itself and refuses the places where the two differ.
 *
 * @module
 */

import { createRequire } from 'node:module';
import { Language, Parser } from 'web-tree-sitter';

/** One node of the copied syntax tree. Offsets are UTF-16 code units into the source. */
export interface ShellNode {
  /** Grammar node type (`command`, `word`, `ERROR`, or an anonymous token such as `$(`). */
  readonly type: string;
  /** False for anonymous tokens (operators, keywords, punctuation). */
  readonly named: boolean;
  /** True when the parser inserted the node to recover from a syntax error. */
  readonly missing: boolean;
  /** The field this node fills in its parent (`name`, `argument`, `redirect`...), if any. */
  readonly field: string | null;
  /** Start offset (inclusive). */
  readonly start: number;
  /** End offset (exclusive). */
  readonly end: number;
  /** Children in source order. */
  readonly children: ShellNode[];
}

/** The bounds a parse stays within; each one, when reached, fails the parse closed. */
export interface ParseLimits {
  /** Most syntax nodes copied out of one parse. */
  readonly maxNodes: number;
  /** Deepest nesting of syntax nodes. */
  readonly maxDepth: number;
  /** Longest time the parser may run on one command, in milliseconds. */
  readonly maxParseMs: number;
}

/** Which limit stopped a parse. */
export type ParseLimit = 'maxNodes' | 'maxDepth' | 'maxParseMs';

/** A parsed tree, or the limit that stopped the parse and where. */
export type ParseOutcome =
  | { readonly ok: true; readonly root: ShellNode; readonly nodeCount: number }
  | { readonly ok: false; readonly limit: ParseLimit; readonly index: number };

/** A loaded parser. `parse` is synchronous and safe to call repeatedly. */
export interface ShellParser {
  parse(source: string, limits: ParseLimits): ParseOutcome;
}

let languagePromise: Promise<Language> | null = null;

/** Loads the web-tree-sitter runtime and the bash grammar once per process. */
function loadLanguage(): Promise<Language> {
  if (languagePromise === null) {
    languagePromise = (async () => {
      await Parser.init();
      const require = createRequire(import.meta.url);
      const wasmPath = require.resolve('tree-sitter-bash/tree-sitter-bash.wasm');
      return Language.load(wasmPath);
    })();
    // A failed load (missing wasm) must not poison every later attempt.
    languagePromise.catch(() => {
      languagePromise = null;
    });
  }
  return languagePromise;
}

/** Loads the bash grammar (once per process) and returns a synchronous parser. */
export async function loadShellParser(): Promise<ShellParser> {
  const language = await loadLanguage();
  const parser = new Parser();
  parser.setLanguage(language);
  return {
    parse(source, limits) {
      const startedAt = performance.now();
      let timedOut = false;
      const tree = parser.parse(source, null, {
        // Returning true cancels the parse (web-tree-sitter >= 0.25).
        progressCallback: () => {
          timedOut = performance.now() - startedAt > limits.maxParseMs;
          return timedOut;
        },
      });
      if (tree === null || timedOut) {
        tree?.delete();
        parser.reset();
        return { ok: false, limit: 'maxParseMs', index: 0 };
      }
      try {
        return copyTree(tree.walk(), limits);
      } finally {
        tree.delete();
      }
    },
  };
}

type Cursor = ReturnType<NonNullable<ReturnType<Parser['parse']>>['walk']>;

/** Copies the tree under `cursor` into plain nodes, iteratively, within the limits. */
function copyTree(cursor: Cursor, limits: ParseLimits): ParseOutcome {
  try {
    const nodeFromCursor = (): ShellNode => ({
      type: cursor.nodeType,
      named: cursor.nodeIsNamed,
      missing: cursor.nodeIsMissing,
      field: cursor.currentFieldName,
      start: cursor.startIndex,
      end: cursor.endIndex,
      children: [],
    });
    const root = nodeFromCursor();
    const parents: ShellNode[] = [];
    let current = root;
    let nodeCount = 1;
    for (;;) {
      if (cursor.gotoFirstChild()) {
        parents.push(current);
        if (parents.length > limits.maxDepth) {
          return { ok: false, limit: 'maxDepth', index: cursor.startIndex };
        }
      } else {
        let moved = cursor.gotoNextSibling();
        while (!moved) {
          if (!cursor.gotoParent()) return { ok: true, root, nodeCount };
          parents.pop();
          moved = cursor.gotoNextSibling();
        }
      }
      nodeCount += 1;
      if (nodeCount > limits.maxNodes) {
        return { ok: false, limit: 'maxNodes', index: cursor.startIndex };
      }
      current = nodeFromCursor();
      parents[parents.length - 1]!.children.push(current);
    }
  } finally {
    cursor.delete();
  }
}
