/**
 * Finds the ways an awk program runs other programs: `system(...)`, a pipe to or from a
 * command (`print | "cmd"`, `"cmd" | getline`, gawk's `|&`), and gawk's `@` (extension
 * loading, includes, indirect calls that can reach `system`).
 *
 * A tokenizer, not a parser: it skips strings, comments and regular-expression literals
 * (so `/a|b/` is not a pipe) and looks at what is left. Where `/` could be division or a
 * regex, it reads division, which never skips code: a misreading can only refuse more.
 *
 * @module
 */

/** Where an awk program runs a command, or where it stopped being understood. */
export interface AwkFinding {
  /** Offset within the program text. */
  readonly offset: number;
  /** The token: `system`, `|`, `@`, or `unparsed` for an unterminated regex or string. */
  readonly token: string;
}

/** After these keywords an expression starts, so `/` opens a regex. */
const EXPRESSION_KEYWORDS = new Set(['print', 'printf', 'return', 'in', 'do', 'else', 'case']);

/** Returns the first construct in `program` that runs a command, or null. */
export function findAwkExecution(program: string): AwkFinding | null {
  const n = program.length;
  let i = 0;
  // True after an operand, where `/` is division rather than the start of a regex.
  let afterOperand = false;
  while (i < n) {
    const c = program[i]!;
    if (c === ' ' || c === '\t' || c === '\r') {
      i += 1;
      continue;
    }
    if (c === '\\' && program[i + 1] === '\n') {
      i += 2;
      continue;
    }
    if (c === '\n' || c === ';' || c === '{' || c === '}' || c === '(' || c === ',') {
      afterOperand = false;
      i += 1;
      continue;
    }
    if (c === '#') {
      while (i < n && program[i] !== '\n') i += 1;
      continue;
    }
    if (c === '"') {
      const end = skipString(program, i);
      if (end === -1) return { offset: i, token: 'unparsed' };
      i = end;
      afterOperand = true;
      continue;
    }
    if (c === '/' && !afterOperand) {
      const end = skipRegex(program, i);
      if (end === -1) return { offset: i, token: 'unparsed' };
      i = end;
      afterOperand = true;
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      const start = i;
      while (i < n && /[A-Za-z0-9_]/.test(program[i]!)) i += 1;
      const word = program.slice(start, i);
      if (word === 'system') return { offset: start, token: 'system' };
      afterOperand = !EXPRESSION_KEYWORDS.has(word);
      continue;
    }
    if (/[0-9.]/.test(c)) {
      while (i < n && /[0-9.eExX]/.test(program[i]!)) i += 1;
      afterOperand = true;
      continue;
    }
    if (c === '|') {
      if (program[i + 1] === '|') {
        i += 2;
        afterOperand = false;
        continue;
      }
      return { offset: i, token: '|' };
    }
    if (c === '@') return { offset: i, token: '@' };
    if (c === ')' || c === ']') {
      afterOperand = true;
      i += 1;
      continue;
    }
    if ((c === '+' || c === '-') && program[i + 1] === c) {
      // `x++ / 2` divides; `++x` leaves the state as it was.
      i += 2;
      continue;
    }
    afterOperand = false;
    i += 1;
  }
  return null;
}

/** Returns the offset after the closing quote of the string at `start`, or -1. */
function skipString(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i += 1) {
    const c = text[i];
    if (c === '\\') {
      i += 1;
      continue;
    }
    if (c === '"') return i + 1;
    if (c === '\n') return -1;
  }
  return -1;
}

/** Returns the offset after the closing slash of the regex at `start`, or -1. */
function skipRegex(text: string, start: number): number {
  let inBracket = false;
  for (let i = start + 1; i < text.length; i += 1) {
    const c = text[i];
    if (c === '\n') return -1;
    if (c === '\\') {
      i += 1;
      continue;
    }
    if (inBracket) {
      if (c === '[' && (text[i + 1] === ':' || text[i + 1] === '.' || text[i + 1] === '=')) {
        const close = text.indexOf(`${text[i + 1]}]`, i + 2);
        if (close === -1) return -1;
        i = close + 1;
      } else if (c === ']') {
        inBracket = false;
      } else if (c === '/') {
        // awks differ on whether this slash ends the regex: refuse rather than guess.
        return -1;
      }
      continue;
    }
    if (c === '[') {
      inBracket = true;
      if (text[i + 1] === '^') i += 1;
      if (text[i + 1] === ']') i += 1;
      continue;
    }
    if (c === '/') return i + 1;
  }
  return -1;
}
