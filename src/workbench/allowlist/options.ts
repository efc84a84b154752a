/**
 * A small getopt for checking the options of programs whose options can run other
 * programs. It follows GNU getopt_long: bundled short options, attached or separate
 * values, `--name=value`, unique-prefix abbreviations of long options, `--`, and either
 * permutation (options anywhere) or stopping at the first operand (`+` optstrings).
 *
 * @module
 */

import { couldBeOption, type Word } from './shell-words.js';

/** How an option takes a value: none, a required value, or an optional attached one. */
export type OptionArity = 'flag' | 'value' | 'optional';

/** The options of one program. */
export interface OptionSpec {
  /** Short options by letter. */
  readonly short: Readonly<Record<string, OptionArity>>;
  /** Long options by name, without the leading `--`. */
  readonly long: Readonly<Record<string, OptionArity>>;
  /** GNU permutation (options after operands count) or stop at the first operand. */
  readonly permute: boolean;
}

/** One option found, by canonical name: `-x` or `--long-name`. */
export interface ParsedOption {
  readonly name: string;
  /** The value, when the option has one: attached text, or the next word. */
  readonly value: Word | string | null;
  /** The word that held the option. */
  readonly word: Word;
}

/** Why an option could not be understood. */
export type OptionProblem = 'unknown' | 'ambiguous' | 'dynamic' | 'missing_value';

/** Options and operands, or the first word that could not be understood. */
export type ParsedArgs =
  | {
      readonly ok: true;
      readonly options: readonly ParsedOption[];
      readonly operands: readonly Word[];
      /** Index in `args` of the first operand when the spec stops there (or args.length). */
      readonly firstOperandAt: number;
      /** Operands that came after `--`, by position in `operands`. */
      readonly afterDoubleDashFrom: number;
    }
  | { readonly ok: false; readonly word: Word; readonly problem: OptionProblem };

/** Finds a long option by exact name or unique prefix. */
export function matchLong(
  spec: Readonly<Record<string, OptionArity>>,
  name: string,
): { name: string; arity: OptionArity } | 'unknown' | 'ambiguous' {
  const exact = spec[name];
  if (exact !== undefined) return { name, arity: exact };
  const candidates = Object.keys(spec).filter((n) => n.startsWith(name));
  if (candidates.length === 0 || name === '') return 'unknown';
  if (candidates.length > 1) return 'ambiguous';
  return { name: candidates[0]!, arity: spec[candidates[0]!]! };
}

/** Parses `args` against `spec`. */
export function parseOptions(args: readonly Word[], spec: OptionSpec): ParsedArgs {
  const options: ParsedOption[] = [];
  const operands: Word[] = [];
  let firstOperandAt = args.length;
  let afterDoubleDashFrom = Number.POSITIVE_INFINITY;
  for (let i = 0; i < args.length; i += 1) {
    const word = args[i]!;
    const v = word.value;
    if (v.kind === 'dynamic') {
      if (couldBeOption(v)) return { ok: false, word, problem: 'dynamic' };
      operands.push(word);
      if (!spec.permute) return stop(i);
      if (firstOperandAt === args.length) firstOperandAt = i;
      continue;
    }
    const text = v.text;
    if (text === '--') {
      afterDoubleDashFrom = operands.length;
      operands.push(...args.slice(i + 1));
      if (firstOperandAt === args.length && i + 1 < args.length) firstOperandAt = i + 1;
      break;
    }
    if (!text.startsWith('-') || text === '-') {
      operands.push(word);
      if (!spec.permute) return stop(i);
      if (firstOperandAt === args.length) firstOperandAt = i;
      continue;
    }
    if (text.startsWith('--')) {
      const eq = text.indexOf('=');
      const name = eq === -1 ? text.slice(2) : text.slice(2, eq);
      const found = matchLong(spec.long, name);
      if (found === 'unknown' || found === 'ambiguous') return { ok: false, word, problem: found };
      let value: Word | string | null = eq === -1 ? null : text.slice(eq + 1);
      if (found.arity === 'value' && value === null) {
        const next = args[i + 1];
        if (next === undefined) return { ok: false, word, problem: 'missing_value' };
        value = next;
        i += 1;
      }
      options.push({ name: `--${found.name}`, value, word });
      continue;
    }
    for (let j = 1; j < text.length; j += 1) {
      const letter = text[j]!;
      const arity = spec.short[letter];
      if (arity === undefined) return { ok: false, word, problem: 'unknown' };
      if (arity === 'flag') {
        options.push({ name: `-${letter}`, value: null, word });
        continue;
      }
      const rest = text.slice(j + 1);
      if (rest !== '' || arity === 'optional') {
        options.push({ name: `-${letter}`, value: rest === '' ? null : rest, word });
      } else {
        const next = args[i + 1];
        if (next === undefined) return { ok: false, word, problem: 'missing_value' };
        options.push({ name: `-${letter}`, value: next, word });
        i += 1;
      }
      break;
    }
  }
  return { ok: true, options, operands, firstOperandAt, afterDoubleDashFrom };

  function stop(i: number): ParsedArgs {
    operands.length = 0;
    operands.push(...args.slice(i));
    return { ok: true, options, operands, firstOperandAt: i, afterDoubleDashFrom };
  }
}

/** The text of an option value when it is fixed, else null. */
export function valueText(value: Word | string | null): string | null {
  if (value === null) return null;
  if (typeof value === 'string') return value;
  return value.value.kind === 'literal' ? value.value.text : null;
}
