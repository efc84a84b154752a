/**
 * Argument rules for allowed programs that can run other programs through an option or
 * a script (`find -exec`, sed `e`, awk `system()`, `git -c`, `tar --to-command`...),
 * and for builtins that set variables by name (`read`, `printf -v`, `declare`...).
 *
 * A rule sees decoded arguments. An argument only known at run time that could be an
 * option is refused where options matter (`dynamic_argument`): the message says to put
 * it after `--` or to start it with `./`. Cheap checks only; the sandbox is the boundary.
 *
 * @module
 */

import { DOCUMENT_RULES } from './document-rules.js';
import { gitRule } from './git-rule.js';
import {
  dynamicArgument,
  type OptionDanger,
  optionRule,
  type ProgramRule,
  scanOptions,
  textOf,
  unsafe,
} from './rule-support.js';
import { awkRule, sedRule } from './script-rules.js';
import { couldBeOption } from './shell-words.js';
import { declarationRule, letRule, printfRule, readRule, unsetRule } from './variable-rules.js';

export type { ProgramRule } from './rule-support.js';

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
  ...DOCUMENT_RULES,
};
