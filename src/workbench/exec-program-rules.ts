/**
 * Argument rules for allowed programs that can run other programs through an option or
 * a script (`find -exec`, `sed` `e`, `awk` `system()`, `git -c`, `tar --to-command`...),
 * and for builtins that set variables by name (`read`, `printf -v`, `declare`...).
 *
 * A rule sees decoded arguments. An argument only known at run time that could be an
 * option is refused where options matter (`dynamic_argument`): the message says to put
 * it after `--` or to start it with `./`. Cheap checks only; the sandbox is the boundary.
 *
 * @module
 */

import { findAwkExecution } from './exec-awk-program.js';
import { type Denial, deny } from './exec-denial.js';
import { type OptionSpec, parseOptions, valueText } from './exec-options.js';
import { isSensitiveVariable } from './exec-policy.js';
import { findSedExecution } from './exec-sed-script.js';
import { couldBeOption, type Word } from './shell-words.js';

/** A rule: the arguments of one invocation in, a refusal or null out. */
export type ProgramRule = (args: readonly Word[], program: string) => Denial | null;

const textOf = (w: Word): string | null => (w.value.kind === 'literal' ? w.value.text : null);

function dynamicArgument(program: string, word: Word, what = 'could be an option'): Denial {
  return deny(
    'dynamic_argument',
    word.raw,
    word.index,
    `${program}: "${word.raw}" is only known at run time and ${what}; write it literally, put it after "--", or start it with "./".`,
  );
}

function unsafe(program: string, word: Word, why: string): Denial {
  return deny('unsafe_argument', word.raw, word.index, `${program}: ${why}`);
}

/** Options that make a program run a command, by long name and short letter. */
interface OptionDanger {
  readonly long: readonly string[];
  /** Long options that are prefixes of a dangerous one but are themselves safe. */
  readonly safeLong?: readonly string[];
  readonly shortLetters?: string;
  /** Short options whose value is the rest of the bundle (scanning stops there). */
  readonly valueLetters?: string;
  /** The first argument may be an old-style bundle without a dash (tar). */
  readonly oldStyleFirst?: boolean;
}

/** Refuses dangerous options, abbreviations of them, and run-time values that could be one. */
function scanOptions(program: string, args: readonly Word[], danger: OptionDanger): Denial | null {
  for (const [i, word] of args.entries()) {
    const text = textOf(word);
    if (text === null) {
      if (couldBeOption(word.value)) return dynamicArgument(program, word);
      continue;
    }
    if (text === '--') return null;
    if (text.startsWith('--')) {
      const name = text.slice(2).split('=', 1)[0]!;
      if (danger.safeLong?.includes(name)) continue;
      const hit = danger.long.find((d) => name !== '' && d.startsWith(name));
      if (hit !== undefined) return unsafe(program, word, `--${hit} runs a command; refused.`);
      continue;
    }
    const bundle = text.startsWith('-')
      ? text.slice(1)
      : i === 0 && danger.oldStyleFirst
        ? text
        : null;
    if (bundle === null) continue;
    for (const letter of bundle) {
      if (danger.shortLetters?.includes(letter)) {
        return unsafe(program, word, `option -${letter} runs a command; refused.`);
      }
      if (text.startsWith('-') && danger.valueLetters?.includes(letter)) break;
    }
  }
  return null;
}

const FIND_EXEC = new Set(['-exec', '-execdir', '-ok', '-okdir']);
const FIND_ONE_VALUE = new Set(
  (
    '-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -type ' +
    '-xtype -size -mtime -mmin -atime -amin -ctime -cmin -newer -anewer -cnewer -perm -user ' +
    '-group -uid -gid -links -inum -samefile -maxdepth -mindepth -fstype -used -printf -fprint ' +
    '-fprint0 -fls -context -regextype -files0-from'
  ).split(' '),
);

/** find: no `-exec`/`-execdir`/`-ok`/`-okdir`; run-time values only as primary values. */
const findRule: ProgramRule = (args, program) => {
  let i = 0;
  // Leading options -H -L -P -D debugopts -Olevel, then an optional `--`.
  while (i < args.length) {
    const text = textOf(args[i]!);
    if (text === '-H' || text === '-L' || text === '-P' || text?.startsWith('-O')) i += 1;
    else if (text === '-D') i += 2;
    else break;
  }
  const dashes = args[i];
  if (dashes !== undefined && textOf(dashes) === '--') i += 1;
  let inExpression = false;
  for (; i < args.length; i += 1) {
    const word = args[i]!;
    const text = textOf(word);
    if (text === null) {
      if (inExpression || couldBeOption(word.value)) {
        return dynamicArgument(program, word, 'could be a find primary such as -exec');
      }
      continue;
    }
    if (!inExpression && (text.startsWith('-') || ['(', ')', '!', ','].includes(text))) {
      inExpression = true;
    }
    if (!inExpression) continue;
    if (FIND_EXEC.has(text)) {
      return unsafe(
        program,
        word,
        `${text} runs a command for each file; use find to list files and pipe them to an allowed program.`,
      );
    }
    if (text === '-fprintf') i += 2;
    else if (FIND_ONE_VALUE.has(text) || /^-newer[amcBt]{2}$/.test(text)) i += 1;
  }
  return null;
};

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
const sedRule: ProgramRule = (args, program) => {
  const parsed = parseOptions(args, SED_SPEC);
  if (!parsed.ok) {
    return parsed.problem === 'dynamic'
      ? dynamicArgument(program, parsed.word)
      : unsafe(
          program,
          parsed.word,
          `option "${parsed.word.raw}" is not understood here; refused.`,
        );
  }
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
const awkRule: ProgramRule = (args, program) => {
  const parsed = parseOptions(args, AWK_SPEC);
  if (!parsed.ok) {
    return parsed.problem === 'dynamic'
      ? dynamicArgument(program, parsed.word)
      : unsafe(
          program,
          parsed.word,
          `option "${parsed.word.raw}" is not understood here; refused.`,
        );
  }
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

const GIT_GLOBAL_WITH_VALUE = new Set([
  '-C',
  '--git-dir',
  '--work-tree',
  '--namespace',
  '--super-prefix',
  '--list-cmds',
  '--attr-source',
]);
const GIT_DENIED_SUBCOMMANDS = new Set([
  'filter-branch',
  'instaweb',
  'send-email',
  'shell',
  'web--browse',
  'daemon',
  'p4',
  'svn',
  'cvsimport',
  'cvsserver',
  'archimport',
  'quiltimport',
]);
/** Per subcommand: long options (abbreviations count) and short letters that run a command. */
const GIT_RISKY: Readonly<Record<string, OptionDanger>> = {
  clone: { long: ['upload-pack', 'template', 'config'], shortLetters: 'uc', valueLetters: 'bjo' },
  init: { long: ['template'] },
  fetch: { long: ['upload-pack'] },
  pull: { long: ['upload-pack'] },
  'ls-remote': { long: ['upload-pack'] },
  push: { long: ['receive-pack', 'exec'] },
  archive: { long: ['exec'] },
  rebase: { long: ['exec'], shortLetters: 'x' },
  difftool: { long: ['extcmd'], shortLetters: 'x' },
  grep: { long: ['open-files-in-pager'], shortLetters: 'O', valueLetters: 'eABCm' },
  submodule: { long: [] },
  bisect: { long: [] },
  config: { long: [] },
};
const GIT_EXEC_KEY =
  /^(alias\.|pager\.|include\.|includeif\.|credential\.|submodule\.|protocol\.|sendemail\.|man\.|browser\.|core\.(pager|editor|sshcommand|fsmonitor|hookspath|askpass|gitproxy|worktree)$|sequence\.editor$|diff\.external$|init\.templatedir$|uploadpack\.packobjectshook$|.*\.(command|cmd|driver|textconv|clean|smudge|process|helper|program|path|uploadpack|receivepack|difffilter|tool)$)/i;

/** git: no config injection, no subcommands or options that run commands. */
const gitRule: ProgramRule = (args, program) => {
  let i = 0;
  for (; i < args.length; i += 1) {
    const word = args[i]!;
    const text = textOf(word);
    if (text === null) return dynamicArgument(program, word, 'could be a git option or subcommand');
    if (!text.startsWith('-')) break;
    if (
      (text.startsWith('-c') && !text.startsWith('--')) ||
      text === '--config-env' ||
      text.startsWith('--config-env=') ||
      text.startsWith('--exec-path=')
    ) {
      return unsafe(
        program,
        word,
        `${text.split('=', 1)[0]} sets configuration that can run commands (aliases, pagers, hooks); refused.`,
      );
    }
    if (GIT_GLOBAL_WITH_VALUE.has(text)) i += 1;
  }
  const subWord = args[i];
  if (subWord === undefined) return null;
  const sub = textOf(subWord)!;
  if (GIT_DENIED_SUBCOMMANDS.has(sub)) {
    return unsafe(program, subWord, `git ${sub} runs other programs; refused.`);
  }
  const danger = GIT_RISKY[sub];
  if (danger === undefined) return null;
  const rest = args.slice(i + 1);
  for (const word of rest) {
    const text = textOf(word);
    if (text === null) {
      if (couldBeOption(word.value)) return dynamicArgument(program, word);
      if (sub === 'config')
        return dynamicArgument(program, word, 'could be a configuration key that runs commands');
      continue;
    }
    if (sub === 'submodule' && text === 'foreach')
      return unsafe(program, word, 'git submodule foreach runs a shell command; refused.');
    if (sub === 'bisect' && text === 'run')
      return unsafe(program, word, 'git bisect run runs a command; refused.');
    if (sub === 'config' && !text.startsWith('-') && GIT_EXEC_KEY.test(text)) {
      return unsafe(
        program,
        word,
        `configuration key "${text}" can make git run commands; refused.`,
      );
    }
  }
  return scanOptions(`${program} ${sub}`, rest, danger);
};

const TAR_DANGER: OptionDanger = {
  long: [
    'to-command',
    'use-compress-program',
    'checkpoint-action',
    'info-script',
    'new-volume-script',
    'rsh-command',
    'rmt-command',
  ],
  safeLong: ['checkpoint'],
  shortLetters: 'IF',
  valueLetters: 'bCfgHKLNTVX',
  oldStyleFirst: true,
};

const optionRule =
  (danger: OptionDanger): ProgramRule =>
  (args, program) =>
    scanOptions(program, args, danger);

/** Refuses setting a sensitive variable by name. */
function sensitive(program: string, name: string, index: number): Denial {
  return deny(
    'sensitive_variable',
    name,
    index,
    `${program} may not change ${name}: it decides which program runs or injects code into one.`,
  );
}

const READ_SPEC: OptionSpec = {
  short: {
    a: 'value',
    d: 'value',
    e: 'flag',
    i: 'value',
    n: 'value',
    N: 'value',
    p: 'value',
    r: 'flag',
    s: 'flag',
    t: 'value',
    u: 'value',
  },
  long: {},
  permute: false,
};

/** read: the variables it sets must be named literally and not be sensitive. */
const readRule: ProgramRule = (args, program) => {
  const parsed = parseOptions(args, READ_SPEC);
  if (!parsed.ok) {
    return parsed.problem === 'dynamic'
      ? dynamicArgument(program, parsed.word)
      : unsafe(
          program,
          parsed.word,
          `option "${parsed.word.raw}" is not understood here; refused.`,
        );
  }
  const names: { text: string | null; word: Word }[] = parsed.operands.map((w) => ({
    text: textOf(w),
    word: w,
  }));
  for (const option of parsed.options) {
    if (option.name === '-a') names.push({ text: valueText(option.value), word: option.word });
  }
  for (const { text, word } of names) {
    if (text === null) return dynamicArgument(program, word, 'is a variable name');
    if (isSensitiveVariable(text)) return sensitive(program, text, word.index);
  }
  return null;
};

/** printf: `-v NAME` must name a variable literally and not a sensitive one. */
const printfRule: ProgramRule = (args, program) => {
  const first = args[0];
  if (first === undefined) return null;
  const text = textOf(first);
  if (text === null) {
    return couldBeOption(first.value)
      ? dynamicArgument(program, first, 'could be -v; use printf \'%s\' "$value"')
      : null;
  }
  if (!text.startsWith('-v')) return null;
  const nameWord = text === '-v' ? args[1] : first;
  const name = text === '-v' ? (nameWord === undefined ? null : textOf(nameWord)) : text.slice(2);
  if (nameWord === undefined) return null;
  if (name === null) return dynamicArgument(program, nameWord, 'is a variable name');
  return isSensitiveVariable(name) ? sensitive(program, name, nameWord.index) : null;
};

/** declare/typeset/local/export/readonly: literal names, no namerefs, no quoted arrays. */
const declarationRule: ProgramRule = (args, program) => {
  const namerefCapable = program === 'declare' || program === 'typeset' || program === 'local';
  for (const word of args) {
    const known = word.value.kind === 'literal' ? word.value.text : word.value.prefix;
    if (known.startsWith('-') || known.startsWith('+')) {
      if (word.value.kind === 'dynamic') return dynamicArgument(program, word);
      if (namerefCapable && known.includes('n')) {
        return unsafe(
          program,
          word,
          '-n makes a name reference, which can set any variable; refused.',
        );
      }
      continue;
    }
    const nameEnd = known.search(/[=[+]/);
    if (nameEnd === -1 && word.value.kind === 'dynamic') {
      return dynamicArgument(program, word, 'could name any variable');
    }
    const name = nameEnd === -1 ? known : known.slice(0, nameEnd);
    if (isSensitiveVariable(name)) return sensitive(program, name, word.index);
    if (known.includes('=(')) {
      return unsafe(
        program,
        word,
        'a quoted array assignment is evaluated as code by bash; write it unquoted.',
      );
    }
  }
  return null;
};

/** unset: literal names, none sensitive. */
const unsetRule: ProgramRule = (args, program) => {
  for (const word of args) {
    const text = textOf(word);
    if (text === null) return dynamicArgument(program, word, 'could name any variable');
    if (text.startsWith('-')) continue;
    if (isSensitiveVariable(text)) return sensitive(program, text, word.index);
  }
  return null;
};

/** let: arithmetic can assign; no sensitive variable may appear in it. */
const letRule: ProgramRule = (args, program) => {
  for (const word of args) {
    for (const m of word.raw.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) {
      if (isSensitiveVariable(m[0])) return sensitive(program, m[0], word.index + (m.index ?? 0));
    }
  }
  return null;
};

/** Rules by program name. Programs without a rule take any arguments. */
export const PROGRAM_RULES: Readonly<Record<string, ProgramRule>> = {
  find: findRule,
  sed: sedRule,
  awk: awkRule,
  gawk: awkRule,
  mawk: awkRule,
  git: gitRule,
  tar: optionRule(TAR_DANGER),
  sort: optionRule({ long: ['compress-program'], safeLong: ['check'], valueLetters: 'kotST' }),
  split: optionRule({ long: ['filter'], valueLetters: 'abClnt' }),
  zip: (args, program) => {
    const hit = args.find((w) => textOf(w)?.startsWith('-TT'));
    if (hit !== undefined) return unsafe(program, hit, '-TT runs a test command; refused.');
    return scanOptions(program, args, { long: ['unzip-command'] });
  },
  wget: optionRule({
    long: ['execute', 'use-askpass', 'config'],
    shortLetters: 'e',
    valueLetters: 'aABDeiIloOPQRtTUwX',
  }),
  read: readRule,
  printf: printfRule,
  declare: declarationRule,
  typeset: declarationRule,
  local: declarationRule,
  export: declarationRule,
  readonly: declarationRule,
  unset: unsetRule,
  let: letRule,
};
