/**
 * Rules for sed and awk: their scripts are code, so a script must be on the command
 * line, fixed before the command runs, and free of the constructs that run commands.
 * Script files (`sed -f`, `awk -f`, gawk `-i`/`-l`/`-E`) are refused: they are not seen.
 *
 * @module
 */

import { findAwkExecution } from './awk-program.js';
import { type OptionSpec, parseOptions, valueText } from './options.js';
import {
  dynamicArgument,
  optionParseDenial,
  type ProgramRule,
  textOf,
  unsafe,
} from './rule-support.js';
import { findSedExecution } from './sed-script.js';
import type { Word } from './shell-words.js';

const SED_SPEC: OptionSpec = {
  short: {
    n: 'flag',
    e: 'value',
    f: 'value',
    i: 'optional',
    l: 'value',
    E: 'flag',
    r: 'flag',
    s: 'flag',
    u: 'flag',
    z: 'flag',
  },
  long: {
    quiet: 'flag',
    silent: 'flag',
    debug: 'flag',
    expression: 'value',
    file: 'value',
    'follow-symlinks': 'flag',
    'in-place': 'optional',
    'line-length': 'value',
    'null-data': 'flag',
    'zero-terminated': 'flag',
    posix: 'flag',
    'regexp-extended': 'flag',
    separate: 'flag',
    sandbox: 'flag',
    unbuffered: 'flag',
    help: 'flag',
    version: 'flag',
  },
  permute: true,
};

/** sed: scripts must be literal, from the command line, and free of `e`. */
export const sedRule: ProgramRule = (args, program) => {
  const parsed = parseOptions(args, SED_SPEC);
  if (!parsed.ok) return optionParseDenial(program, parsed);
  const scripts: { text: string | null; word: Word }[] = [];
  for (const option of parsed.options) {
    if (option.name === '-f' || option.name === '--file') {
      return unsafe(
        program,
        option.word,
        'script files are not checked; pass the script with -e or as the first argument.',
      );
    }
    if (option.name === '-e' || option.name === '--expression') {
      scripts.push({
        text: valueText(option.value),
        word:
          typeof option.value === 'object' && option.value !== null ? option.value : option.word,
      });
    }
  }
  if (scripts.length === 0) {
    const first = parsed.operands[0];
    if (first === undefined) return null;
    scripts.push({ text: textOf(first), word: first });
  }
  for (const script of scripts) {
    if (script.text === null)
      return dynamicArgument(
        program,
        script.word,
        'is the sed script, which must be fixed to be checked',
      );
  }
  const joined = scripts.map((s) => s.text).join('\n');
  const finding = findSedExecution(joined);
  if (finding === null) return null;
  const word = scripts[0]!.word;
  return finding.kind === 'executes'
    ? unsafe(
        program,
        word,
        'the script uses the e command or the e flag of s, which runs a shell command; refused.',
      )
    : unsafe(
        program,
        word,
        `the script could not be fully understood near "${joined.slice(finding.offset, finding.offset + 12)}"; refused rather than guessed at.`,
      );
};

const AWK_SPEC: OptionSpec = {
  short: {
    F: 'value',
    v: 'value',
    f: 'value',
    e: 'value',
    i: 'value',
    l: 'value',
    E: 'value',
    W: 'value',
    b: 'flag',
    c: 'flag',
    C: 'flag',
    g: 'flag',
    h: 'flag',
    M: 'flag',
    n: 'flag',
    N: 'flag',
    O: 'flag',
    P: 'flag',
    r: 'flag',
    s: 'flag',
    S: 'flag',
    t: 'flag',
    V: 'flag',
    Y: 'flag',
    d: 'optional',
    D: 'optional',
    L: 'optional',
    o: 'optional',
    p: 'optional',
  },
  long: {
    'field-separator': 'value',
    assign: 'value',
    file: 'value',
    source: 'value',
    include: 'value',
    load: 'value',
    exec: 'value',
    'characters-as-bytes': 'flag',
    traditional: 'flag',
    copyright: 'flag',
    'dump-variables': 'optional',
    debug: 'optional',
    'gen-pot': 'flag',
    help: 'flag',
    lint: 'optional',
    bignum: 'flag',
    'use-lc-numeric': 'flag',
    'non-decimal-data': 'flag',
    optimize: 'flag',
    'no-optimize': 'flag',
    profile: 'optional',
    'pretty-print': 'optional',
    posix: 'flag',
    're-interval': 'flag',
    sandbox: 'flag',
    'lint-old': 'flag',
    version: 'flag',
    csv: 'flag',
  },
  permute: false,
};

const AWK_CODE_FROM_FILES = new Set([
  '-f',
  '--file',
  '-i',
  '--include',
  '-l',
  '--load',
  '-E',
  '--exec',
  '-W',
]);

/** awk: the program must be literal, on the command line, with no system(), pipe or @. */
export const awkRule: ProgramRule = (args, program) => {
  const parsed = parseOptions(args, AWK_SPEC);
  if (!parsed.ok) return optionParseDenial(program, parsed);
  const sources: { text: string | null; word: Word }[] = [];
  for (const option of parsed.options) {
    if (AWK_CODE_FROM_FILES.has(option.name)) {
      return unsafe(
        program,
        option.word,
        `${option.name} loads code that is not checked; pass the program as an argument.`,
      );
    }
    if (option.name === '-e' || option.name === '--source') {
      sources.push({
        text: valueText(option.value),
        word:
          typeof option.value === 'object' && option.value !== null ? option.value : option.word,
      });
    }
  }
  if (sources.length === 0) {
    const first = parsed.operands[0];
    if (first === undefined) return null;
    sources.push({ text: textOf(first), word: first });
  }
  for (const source of sources) {
    if (source.text === null)
      return dynamicArgument(
        program,
        source.word,
        'is the awk program, which must be fixed to be checked',
      );
    const finding = findAwkExecution(source.text);
    if (finding !== null) {
      return unsafe(
        program,
        source.word,
        finding.token === 'unparsed'
          ? 'the program could not be fully understood (an unterminated string or regex); refused.'
          : `the program uses "${finding.token}", which runs a command; refused.`,
      );
    }
  }
  return null;
};
