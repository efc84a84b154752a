import t from 'tap';
import { findAwkExecution } from '../../../src/workbench/allowlist/awk-program.js';
import { isSensitiveVariable } from '../../../src/workbench/allowlist/index.js';
import { parseOptions } from '../../../src/workbench/allowlist/options.js';
import { findSedExecution } from '../../../src/workbench/allowlist/sed-script.js';
import {
  couldBeOption,
  decodeUnquoted,
  findHiddenSubstitution,
  unquoteDelimiter,
  type Word,
} from '../../../src/workbench/allowlist/shell-words.js';

/** The pure pieces under the exec allowlist: sed and awk scanners, getopt, word decoding. */

t.test('sed: the e command and the e flag are found, everything else is read past', async (t) => {
  const cases: [string, 'clean' | 'executes' | 'unparsed'][] = [
    ['s/a/b/', 'clean'],
    ['s/a/b/g', 'clean'],
    ['s|e|e|gp', 'clean'],
    ['s/a/b/w out.txt', 'clean'],
    ['/^#/d; s/x/y/2', 'clean'],
    ['1~2{s/a/b/;p}', 'clean'],
    ['$!N; P; D', 'clean'],
    ['0,/re/I s//x/', 'clean'],
    ['\\%e%d', 'clean'],
    ['y/abc/xyz/', 'clean'],
    ['a\\\nappended text with e', 'clean'],
    ['i inserted e text', 'clean'],
    ['r file.e', 'clean'],
    [':e\nb e', 'clean'],
    ['# e comment\np', 'clean'],
    ['q5', 'clean'],
    ['e', 'executes'],
    ['1e id', 'executes'],
    ['/x/!e', 'executes'],
    ['s/a/b/e', 'executes'],
    ['s/a/b/ge', 'executes'],
    ['s/a/b/;e', 'executes'],
    ['{e\n}', 'executes'],
    ['s/a/b', 'unparsed'],
    ['k', 'unparsed'],
    ['p x', 'unparsed'],
    ['s/a/b/x', 'unparsed'],
  ];
  for (const [script, expected] of cases) {
    const finding = findSedExecution(script);
    t.equal(finding === null ? 'clean' : finding.kind, expected, JSON.stringify(script));
  }
});

t.test('awk: system, pipes and @ are found; strings, regexes and || are not', async (t) => {
  const cases: [string, string | null][] = [
    ['{print $1}', null],
    ['/a|b/ {n++} END {print n}', null],
    ['$0 ~ "a|b" {print}', null],
    ['{ if (a || b) print }', null],
    ['BEGIN { x = 4 / 2; y = x / 2 }', null],
    ['# system("sh")\n{print}', null],
    ['{print "system(x)"}', null],
    ['{print > "/dev/stderr"}', null],
    ['{ getline line < "f"; print line }', null],
    ['/[[:alpha:]]+/ {print}', null],
    ['BEGIN{system("sh")}', 'system'],
    ['{print | "sh"}', '|'],
    ['BEGIN{"id" | getline}', '|'],
    ['{print |& "cat"}', '|'],
    ['@load "x"', '@'],
    ['BEGIN{f="system"; @f("sh")}', '@'],
    ['{ x = (a) / 2; system("sh") }', 'system'],
    ['/abc', 'unparsed'],
    ['{print "abc}', 'unparsed'],
    ['/[/]/', 'unparsed'],
  ];
  for (const [program, token] of cases) {
    t.equal(findAwkExecution(program)?.token ?? null, token, JSON.stringify(program));
  }
});

const word = (text: string): Word => ({ value: { kind: 'literal', text }, index: 0, raw: text });
const dyn = (prefix: string): Word => ({ value: { kind: 'dynamic', prefix }, index: 0, raw: '$x' });

t.test('getopt: bundles, values, abbreviations, --, permutation', async (t) => {
  const spec = {
    short: { n: 'flag', e: 'value', i: 'optional' },
    long: { expression: 'value', 'in-place': 'optional', quiet: 'flag', quit: 'flag' },
    permute: true,
  } as const;
  const names = (args: Word[]) => {
    const r = parseOptions(args, spec);
    return r.ok
      ? {
          options: r.options.map((o) => [
            o.name,
            typeof o.value === 'string' ? o.value : (o.value?.raw ?? null),
          ]),
          operands: r.operands.map((o) => o.raw),
        }
      : r.problem;
  };
  t.same(names([word('-ne'), word('p'), word('f')]), {
    options: [
      ['-n', null],
      ['-e', 'p'],
    ],
    operands: ['f'],
  });
  t.same(names([word('-i.bak'), word('s'), word('f')]), {
    options: [['-i', '.bak']],
    operands: ['s', 'f'],
  });
  t.same(names([word('--expr=x'), word('f')]), {
    options: [['--expression', 'x']],
    operands: ['f'],
  });
  t.same(names([word('f'), word('-n')]), { options: [['-n', null]], operands: ['f'] }, 'permuted');
  t.same(names([word('--'), word('-n'), dyn('')]), {
    options: [],
    operands: ['--', '-n', '$x'].slice(1),
  });
  t.equal(names([word('--qui')]), 'ambiguous');
  t.equal(names([word('-k')]), 'unknown');
  t.equal(names([word('-e')]), 'missing_value');
  t.equal(names([dyn('')]), 'dynamic');
  t.same(names([dyn('./')]), { options: [], operands: ['$x'] });

  const stopping = { ...spec, permute: false };
  const r = parseOptions([word('-n'), word('prog'), word('-e'), word('x')], stopping);
  t.same(r.ok && r.operands.map((o) => o.raw), ['prog', '-e', 'x'], 'stops at the first operand');
});

t.test('word decoding and hidden substitutions', async (t) => {
  t.same(decodeUnquoted('\\sh', true, false), { kind: 'literal', text: 'sh' });
  t.same(decodeUnquoted('s\\\nh', true, false), { kind: 'literal', text: 'sh' });
  t.same(decodeUnquoted('a*', true, false), { kind: 'dynamic', prefix: 'a' });
  t.same(decodeUnquoted('~/x', true, false), { kind: 'dynamic', prefix: '' });
  t.same(decodeUnquoted('a~b', true, false), { kind: 'literal', text: 'a~b' });
  t.same(decodeUnquoted('{a,b}', true, true), { kind: 'dynamic', prefix: '' });
  t.same(decodeUnquoted('{}', true, false), { kind: 'literal', text: '{}' });
  t.same(decodeUnquoted('[ab]', true, false), { kind: 'dynamic', prefix: '' });
  t.equal(couldBeOption({ kind: 'dynamic', prefix: '' }), true);
  t.equal(couldBeOption({ kind: 'dynamic', prefix: './' }), false);
  t.equal(couldBeOption({ kind: 'literal', text: '-x' }), true);

  t.same(findHiddenSubstitution('a `b`', true), { offset: 2, token: '`' });
  t.same(findHiddenSubstitution('a $(b)', true), { offset: 2, token: '$(' });
  t.same(findHiddenSubstitution('a $\\\n(b)', true), { offset: 2, token: '$(' });
  t.equal(findHiddenSubstitution('a \\$(b) \\`', true), null);
  t.equal(findHiddenSubstitution('a <(b)', true), null);
  t.same(findHiddenSubstitution('a<(b)', false), { offset: 1, token: '<(' });

  t.equal(unquoteDelimiter("'EOF'"), 'EOF');
  t.equal(unquoteDelimiter('E"O"F'), 'EOF');
  t.equal(unquoteDelimiter('\\EOF'), 'EOF');
  t.equal(unquoteDelimiter('EOF'), 'EOF');
});

t.test('sensitive variables', async (t) => {
  for (const name of [
    'PATH',
    'LD_PRELOAD',
    'LD_LIBRARY_PATH',
    'BASH_ENV',
    'BASH_CMDS',
    'GIT_SSH_COMMAND',
    'GIT_EXEC_PATH',
    'PAGER',
    'GIT_PAGER',
    'EDITOR',
    'SSH_ASKPASS',
    'PROMPT_COMMAND',
    'TAR_OPTIONS',
    'NODE_OPTIONS',
    'ENV',
  ]) {
    t.equal(isSensitiveVariable(name), true, name);
  }
  for (const name of ['FOO', 'path', 'LANG', 'LC_ALL', 'TZ', 'CI', 'x']) {
    t.equal(isSensitiveVariable(name), false, name);
  }
});
