/**
 * Shared pieces of the argument rules: the rule type, refusals, and a scan for options
 * that run commands (with GNU-style abbreviations of long options).
 *
 * @module
 */

import { type Denial, deny } from './denial.js';
import type { ParsedArgs } from './options.js';
import { sensitiveVariableRule } from './sensitive-variables.js';
import { couldBeOption, type Word } from './shell-words.js';

/** A rule: the arguments of one invocation in, a refusal or null out. */
export type ProgramRule = (args: readonly Word[], program: string) => Denial | null;

/** The fixed text of a word, or null when it is only known at run time. */
export const textOf = (w: Word): string | null =>
  w.value.kind === 'literal' ? w.value.text : null;

/** Refuses a run-time value where it could change what the program runs. */
export function dynamicArgument(program: string, word: Word, what = 'could be an option'): Denial {
  return deny(
    'dynamic_argument',
    word.raw,
    word.index,
    `${program}: "${word.raw}" is only known at run time and ${what}; write it literally, put it after "--", or start it with "./".`,
  );
}

/** Refuses an option or script that makes the program run a command. */
export function unsafe(program: string, word: Word, why: string): Denial {
  return deny('unsafe_argument', word.raw, word.index, `${program}: ${why}`);
}

/** Options that make a program run a command, by long name and short letter. */
export interface OptionDanger {
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
export function scanOptions(
  program: string,
  args: readonly Word[],
  danger: OptionDanger,
): Denial | null {
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

/** A rule made of {@link scanOptions} alone. */
export const optionRule =
  (danger: OptionDanger): ProgramRule =>
  (args, program) =>
    scanOptions(program, args, danger);

/** Refuses setting a sensitive variable by name. */
export function sensitive(program: string, name: string, index: number): Denial {
  return deny(
    'sensitive_variable',
    name,
    index,
    `${program} may not change ${name}: ${sensitiveVariableRule(name)?.reason ?? 'a command may not set it'}.`,
  );
}

/** The refusal for arguments the option parser could not read. */
export function optionParseDenial(
  program: string,
  failed: Extract<ParsedArgs, { ok: false }>,
): Denial {
  return failed.problem === 'dynamic'
    ? dynamicArgument(program, failed.word)
    : unsafe(program, failed.word, `option "${failed.word.raw}" is not understood here; refused.`);
}
