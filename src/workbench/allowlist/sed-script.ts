/**
 * Finds the GNU sed commands that run a shell: the `e` command and the `e` flag of `s`.
 *
 * A small parser of sed scripts (addresses, `!`, blocks, every GNU command with its
 * argument syntax, `s` and `y` with any delimiter). Anything it does not recognise is
 * reported as not understood, and the caller refuses it: a script this parser cannot
 * read is one sed might read differently.
 *
 * @module
 */

/** Where a sed script runs a command, or where it stopped being understood. */
export interface SedFinding {
  /** Offset within the script. */
  readonly offset: number;
  /** `executes` for `e`, `unparsed` for syntax this parser does not follow. */
  readonly kind: 'executes' | 'unparsed';
}

const SIMPLE_COMMANDS = new Set([
  '=',
  'd',
  'D',
  'g',
  'G',
  'h',
  'H',
  'n',
  'N',
  'p',
  'P',
  'x',
  'z',
  'F',
]);

/** Returns the first `e` command or flag in `script`, or where parsing failed; null when clean. */
export function findSedExecution(script: string): SedFinding | null {
  let i = 0;
  const n = script.length;
  const at = (k: number): string | undefined => script[k];
  const skipBlanks = (): void => {
    while (at(i) === ' ' || at(i) === '\t') i += 1;
  };
  const skipToLineEnd = (): void => {
    while (i < n && at(i) !== '\n') i += 1;
  };
  const unparsed = (offset: number): SedFinding => ({ offset, kind: 'unparsed' });
  /** Skips text up to an unescaped `delim`; false when the line or script ends first. */
  const skipDelimited = (delim: string, newlineOk: boolean): boolean => {
    while (i < n) {
      const c = at(i);
      if (c === '\\') {
        i += 2;
        continue;
      }
      if (c === delim) {
        i += 1;
        return true;
      }
      if (c === '\n' && !newlineOk) return false;
      i += 1;
    }
    return false;
  };
  const skipDigits = (): void => {
    while (i < n && /[0-9]/.test(at(i)!)) i += 1;
  };
  /** One address; false when it started but was malformed. */
  const skipAddress = (second: boolean): boolean => {
    const c = at(i);
    if (c === undefined) return true;
    if (/[0-9]/.test(c)) {
      skipDigits();
      if (at(i) === '~') {
        i += 1;
        skipDigits();
      }
      return true;
    }
    if (second && (c === '+' || c === '~')) {
      i += 1;
      skipDigits();
      return true;
    }
    if (c === '$') {
      i += 1;
      return true;
    }
    if (c === '/' || c === '\\') {
      let delim = '/';
      if (c === '\\') {
        delim = at(i + 1) ?? '';
        if (delim === '' || delim === '\n' || delim === '\\') return false;
        i += 1;
      }
      i += 1;
      if (!skipDelimited(delim, false)) return false;
      while (at(i) === 'I' || at(i) === 'M') i += 1;
      return true;
    }
    return true;
  };

  while (i < n) {
    const c = at(i)!;
    if (c === ' ' || c === '\t' || c === '\n' || c === ';') {
      i += 1;
      continue;
    }
    if (c === '#') {
      skipToLineEnd();
      continue;
    }
    const commandStart = i;
    if (!skipAddress(false)) return unparsed(commandStart);
    skipBlanks();
    if (at(i) === ',') {
      i += 1;
      skipBlanks();
      if (!skipAddress(true)) return unparsed(commandStart);
      skipBlanks();
    }
    while (at(i) === '!') {
      i += 1;
      skipBlanks();
    }
    const cmd = at(i);
    const cmdAt = i;
    if (cmd === undefined) return unparsed(commandStart);
    i += 1;
    if (cmd === 'e') return { offset: cmdAt, kind: 'executes' };
    if (cmd === '{' || cmd === '}') continue;
    if (SIMPLE_COMMANDS.has(cmd)) {
      // no argument
    } else if (cmd === 'l' || cmd === 'L' || cmd === 'q' || cmd === 'Q') {
      skipBlanks();
      skipDigits();
    } else if (cmd === ':' || cmd === 'b' || cmd === 't' || cmd === 'T' || cmd === 'v') {
      while (i < n && at(i) !== '\n' && at(i) !== ';') i += 1;
    } else if (cmd === 'a' || cmd === 'i' || cmd === 'c') {
      // Text runs to the end of the line; a line ending in a backslash continues it.
      while (i < n && at(i) !== '\n') {
        if (at(i) === '\\') i += 1;
        i += 1;
      }
      continue;
    } else if (cmd === 'r' || cmd === 'R' || cmd === 'w' || cmd === 'W') {
      skipToLineEnd();
      continue;
    } else if (cmd === 's' || cmd === 'y') {
      const delim = at(i);
      if (delim === undefined || delim === '\n' || delim === '\\') return unparsed(cmdAt);
      i += 1;
      if (!skipDelimited(delim, false)) return unparsed(cmdAt);
      if (!skipDelimited(delim, true)) return unparsed(cmdAt);
      if (cmd === 's') {
        for (;;) {
          const flag = at(i);
          if (flag === 'e') return { offset: i, kind: 'executes' };
          if (flag === 'w') {
            skipToLineEnd();
            break;
          }
          if (flag !== undefined && /[gpiImM0-9]/.test(flag)) {
            i += 1;
            continue;
          }
          break;
        }
      }
    } else {
      return unparsed(cmdAt);
    }
    skipBlanks();
    const end = at(i);
    if (end !== undefined && end !== '\n' && end !== ';' && end !== '}' && end !== '#') {
      return unparsed(i);
    }
  }
  return null;
}
