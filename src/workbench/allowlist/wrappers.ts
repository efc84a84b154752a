/**
 * Checked wrappers: programs that run another program (`env`, `timeout`, `nice`,
 * `nohup`, `stdbuf`, `xargs`, `time`). Each one's options are parsed the way its GNU
 * implementation does (they all stop at the first operand), so the program it runs is
 * found exactly and can be checked as a command of its own.
 *
 * @module
 */

import { type Denial, deny } from './denial.js';
import { type OptionProblem, type OptionSpec, parseOptions } from './options.js';
import { isSensitiveVariable, sensitiveVariableRule } from './sensitive-variables.js';
import type { Word } from './shell-words.js';

/** What a wrapper runs: a program and its arguments, nothing, or a refusal. */
export type WrapperOutcome =
  | { readonly kind: 'runs'; readonly program: Word; readonly args: readonly Word[] }
  | { readonly kind: 'none' }
  | { readonly kind: 'deny'; readonly denial: Denial };

const HELP = { help: 'flag', version: 'flag' } as const;

const SPECS: Readonly<Record<string, OptionSpec>> = {
  env: {
    short: { '0': 'flag', i: 'flag', v: 'flag', u: 'value', C: 'value', S: 'value', a: 'value' },
    long: {
      ...HELP,
      'ignore-environment': 'flag',
      null: 'flag',
      unset: 'value',
      chdir: 'value',
      'split-string': 'value',
      debug: 'flag',
      'default-signal': 'optional',
      'ignore-signal': 'optional',
      'block-signal': 'optional',
      'list-signal-handling': 'flag',
      argv0: 'value',
    },
    permute: false,
  },
  timeout: {
    short: { k: 'value', s: 'value', v: 'flag' },
    long: {
      ...HELP,
      'kill-after': 'value',
      signal: 'value',
      verbose: 'flag',
      'preserve-status': 'flag',
      foreground: 'flag',
    },
    permute: false,
  },
  nice: { short: { n: 'value' }, long: { ...HELP, adjustment: 'value' }, permute: false },
  nohup: { short: {}, long: { ...HELP }, permute: false },
  stdbuf: {
    short: { i: 'value', o: 'value', e: 'value' },
    long: { ...HELP, input: 'value', output: 'value', error: 'value' },
    permute: false,
  },
  xargs: {
    short: {
      '0': 'flag',
      a: 'value',
      d: 'value',
      E: 'value',
      e: 'optional',
      I: 'value',
      i: 'optional',
      L: 'value',
      l: 'optional',
      n: 'value',
      o: 'flag',
      p: 'flag',
      P: 'value',
      r: 'flag',
      s: 'value',
      t: 'flag',
      x: 'flag',
    },
    long: {
      ...HELP,
      null: 'flag',
      'arg-file': 'value',
      delimiter: 'value',
      eof: 'optional',
      replace: 'optional',
      'max-lines': 'optional',
      'max-args': 'value',
      'open-tty': 'flag',
      interactive: 'flag',
      'max-procs': 'value',
      'no-run-if-empty': 'flag',
      'max-chars': 'value',
      verbose: 'flag',
      exit: 'flag',
      'show-limits': 'flag',
      'process-slot-var': 'value',
    },
    permute: false,
  },
  time: {
    short: { a: 'flag', f: 'value', o: 'value', p: 'flag', q: 'flag', v: 'flag', V: 'flag' },
    long: {
      ...HELP,
      append: 'flag',
      format: 'value',
      output: 'value',
      portability: 'flag',
      quiet: 'flag',
      verbose: 'flag',
    },
    permute: false,
  },
};

/** Options of a wrapper that make it run something other than its program operand. */
const UNSAFE_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  env: ['-S', '--split-string'],
  xargs: ['--process-slot-var'],
};

function optionDenial(wrapper: string, word: Word, problem: OptionProblem): Denial {
  if (problem === 'dynamic') {
    return deny(
      'dynamic_argument',
      word.raw,
      word.index,
      `${wrapper}: "${word.raw}" is only known at run time and could be an option or the program to run; write the program and options literally.`,
    );
  }
  return deny(
    'unsafe_argument',
    word.raw,
    word.index,
    `${wrapper}: option "${word.raw}" is ${problem === 'missing_value' ? 'missing its value' : `${problem} here`}; the program it runs cannot be found, so the command was refused.`,
  );
}

/** True when `name` is a checked wrapper. */
export function isCheckedWrapper(name: string): boolean {
  return Object.hasOwn(SPECS, name);
}

/**
 * Finds the program a checked wrapper runs. For `xargs`, the program also receives
 * items read from standard input: they are added as one argument only known at run
 * time, so the program's own rules treat them as possible options.
 */
export function unwrap(wrapper: string, wrapperWord: Word, args: readonly Word[]): WrapperOutcome {
  const spec = SPECS[wrapper];
  if (spec === undefined) throw new Error(`not a checked wrapper: ${wrapper}`);
  let rest = args;
  if (wrapper === 'nice') {
    // Legacy `nice -5 cmd` / `nice --5 cmd`.
    const first = rest[0]?.value;
    if (first?.kind === 'literal' && /^--?[0-9]+$/.test(first.text)) rest = rest.slice(1);
  }
  const parsed = parseOptions(rest, spec);
  if (!parsed.ok)
    return { kind: 'deny', denial: optionDenial(wrapper, parsed.word, parsed.problem) };
  for (const option of parsed.options) {
    if (UNSAFE_OPTIONS[wrapper]?.includes(option.name)) {
      return {
        kind: 'deny',
        denial: deny(
          'unsafe_argument',
          option.word.raw,
          option.word.index,
          `${wrapper} ${option.name} runs a command that cannot be checked; run the program directly.`,
        ),
      };
    }
  }
  let operands = parsed.operands;
  if (wrapper === 'env') {
    // `-` alone means -i; then NAME=VALUE assignments precede the program.
    while (operands[0]?.value.kind === 'literal' && operands[0].value.text === '-') {
      operands = operands.slice(1);
    }
    while (operands.length > 0) {
      const word = operands[0]!;
      const text = word.value.kind === 'literal' ? word.value.text : word.value.prefix;
      const eq = text.indexOf('=');
      if (eq === -1) {
        if (word.value.kind === 'dynamic')
          return { kind: 'deny', denial: optionDenial('env', word, 'dynamic') };
        break;
      }
      const name = text.slice(0, eq);
      if (isSensitiveVariable(name)) {
        return {
          kind: 'deny',
          denial: deny(
            'sensitive_variable',
            name,
            word.index,
            `env may not set ${name}: ${sensitiveVariableRule(name)?.reason ?? 'a command may not set it'}.`,
          ),
        };
      }
      operands = operands.slice(1);
    }
  }
  if (wrapper === 'timeout') {
    // The duration comes before the program.
    if (operands.length === 0) return { kind: 'none' };
    operands = operands.slice(1);
  }
  const program = operands[0];
  if (program === undefined) return { kind: 'none' };
  const programArgs = operands.slice(1);
  if (wrapper === 'xargs') {
    // Items read from standard input become further arguments, unknown until run time.
    const stdinItems: Word = {
      value: { kind: 'dynamic', prefix: '' },
      index: wrapperWord.index,
      raw: `${wrapperWord.raw} (standard input)`,
    };
    return { kind: 'runs', program, args: [...programArgs, stdinItems] };
  }
  return { kind: 'runs', program, args: programArgs };
}
