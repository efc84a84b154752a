/**
 * Rules for builtins that set variables by name (`read`, `printf -v`, `declare` and
 * friends, `unset`, `let`): the names must be literal and none may be sensitive
 * (`PATH`, `LD_*`, `GIT_*`...), since those decide which program runs.
 *
 * @module
 */

import { type OptionSpec, parseOptions, valueText } from './options.js';
import {
  dynamicArgument,
  optionParseDenial,
  type ProgramRule,
  sensitive,
  textOf,
  unsafe,
} from './rule-support.js';
import { isSensitiveVariable } from './sensitive-variables.js';
import { couldBeOption, type Word } from './shell-words.js';

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
export const readRule: ProgramRule = (args, program) => {
  const parsed = parseOptions(args, READ_SPEC);
  if (!parsed.ok) return optionParseDenial(program, parsed);
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
export const printfRule: ProgramRule = (args, program) => {
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
export const declarationRule: ProgramRule = (args, program) => {
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
export const unsetRule: ProgramRule = (args, program) => {
  for (const word of args) {
    const text = textOf(word);
    if (text === null) return dynamicArgument(program, word, 'could name any variable');
    if (text.startsWith('-')) continue;
    if (isSensitiveVariable(text)) return sensitive(program, text, word.index);
  }
  return null;
};

/** let: arithmetic can assign; no sensitive variable may appear in it. */
export const letRule: ProgramRule = (args, program) => {
  for (const word of args) {
    for (const m of word.raw.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) {
      if (isSensitiveVariable(m[0])) return sensitive(program, m[0], word.index + (m.index ?? 0));
    }
  }
  return null;
};
