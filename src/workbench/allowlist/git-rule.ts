/**
 * The git rule. git runs other programs through configuration (aliases with `!`,
 * pagers, editors, hooks, filters, ssh commands), through a few subcommands, and
 * through a few options. Refused: configuration from the command line (`-c`,
 * `--config-env`, `--exec-path=`), `git config` of keys that run commands, the
 * subcommands that run programs, and the options per subcommand that do.
 *
 * Configuration written as files into the workspace (`.git/config`, hooks) is out of
 * reach of a command-line check; the sandbox holds it.
 *
 * @module
 */

import {
  dynamicArgument,
  type OptionDanger,
  type ProgramRule,
  scanOptions,
  textOf,
  unsafe,
} from './rule-support.js';
import { couldBeOption } from './shell-words.js';

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
export const gitRule: ProgramRule = (args, program) => {
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
