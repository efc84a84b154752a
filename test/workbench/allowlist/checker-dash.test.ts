import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  type CommandChecker,
  createCommandChecker,
} from '../../../src/workbench/allowlist/index.js';

/**
 * Differential check against the real shell: generated command lines are checked, and
 * every one the allowlist lets through is run by dash with a PATH holding only logging
 * stand-ins. If dash ever runs the forbidden stand-in `evil` (or `sh`), the parser and
 * the shell read the line differently and the allowlist was bypassed.
 *
 * Deterministic (a seeded generator), so a failure reproduces.
 */

const DASH = '/usr/bin/dash';

const TOKEN_SETS: readonly (readonly string[])[] = [
  // quoting and escaping around an evil word
  [
    "'",
    '"',
    '\\',
    '$',
    '(',
    ')',
    '`',
    'evil',
    ' ',
    '{',
    '}',
    ':-',
    '#',
    '\n',
    'E',
    '<<',
    "'E'",
    '\t',
    ';',
    'echo ',
    'cat ',
  ],
  // here-documents and their delimiters
  [
    'cat <<E',
    "cat <<'E'",
    'cat <<-E',
    'cat <<"E"',
    'cat <<\\E',
    '\nE\n',
    '\n\tE\n',
    '\nE',
    '$(evil)',
    '`evil`',
    "'",
    '"',
    '\\',
    '\n',
    ' ',
    '#',
    ';',
    'evil',
    '\\\n',
    '${x:-',
    '}',
    'echo ',
    '$',
    '(',
    ')',
    'E',
  ],
  // newlines and line continuations between commands
  [
    'ls',
    'evil',
    ' ',
    '\n',
    '\\\n',
    '\\',
    ';',
    '&&',
    '|',
    '#',
    '\t',
    '(',
    ')',
    '{',
    '}',
    'echo',
    "'",
    '"',
  ],
  // operators, tests, arithmetic and keywords
  [
    'ls',
    'evil',
    'cat',
    ' ',
    ' ',
    '\n',
    ';',
    '&&',
    '|',
    '$(',
    ')',
    '(',
    '`',
    "'",
    '"',
    '\\',
    '\\\n',
    '#',
    '<<',
    "<<'E'",
    'E',
    '{',
    '}',
    '[',
    ']',
    '[[',
    ']]',
    '((',
    '))',
    '$x',
    'x=',
    '$((',
    '${x:-',
    '\\`',
    '\\$',
    'echo',
    'env',
    'if',
    'then',
    'fi',
    'case',
    'in',
    'esac',
    '!',
  ],
];

function generator(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
}

t.test(
  'allowed lines never make dash run a refused program',
  { skip: !existsSync(DASH) && 'no dash' },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'exec-allowlist-dash-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const bin = join(dir, 'bin');
    const run = join(dir, 'run');
    const log = join(dir, 'log');
    mkdirSync(bin);
    mkdirSync(run);
    for (const name of ['ls', 'cat', 'grep', 'evil', 'sh', 'bash', 'E']) {
      writeFileSync(join(bin, name), `#!${DASH}\necho ${name} >> ${log}\n`);
      chmodSync(join(bin, name), 0o755);
    }
    const checker: CommandChecker = await createCommandChecker({ extraAllowed: ['E'] });

    const ranUnder = (command: string): string => {
      rmSync(log, { force: true });
      spawnSync(DASH, ['-c', command], {
        cwd: run,
        env: { PATH: bin },
        timeout: 2000,
        input: 'ls\n',
      });
      return existsSync(log) ? readFileSync(log, 'utf8') : '';
    };

    let allowed = 0;
    const bypasses: string[] = [];
    for (const [setIndex, tokens] of TOKEN_SETS.entries()) {
      const next = generator(1000 + setIndex);
      for (let k = 0; k < 3000; k += 1) {
        let command = '';
        const length = 2 + Math.floor(next() * 10);
        for (let j = 0; j < length; j += 1) command += tokens[Math.floor(next() * tokens.length)];
        if (!command.includes('evil'))
          command += ` evil${tokens[Math.floor(next() * tokens.length)]}`;
        if (!checker.check(command).ok) continue;
        allowed += 1;
        if (/^(evil|sh|bash)$/m.test(ranUnder(command))) bypasses.push(command);
      }
    }
    t.same(bypasses, [], 'no generated line that passed the check ran a refused program');
    t.ok(allowed > 100, `${allowed} generated lines passed and were run`);

    // Hand-written lines that must pass and must stay harmless under dash.
    for (const command of [
      'echo \'$(evil)\' "\\$(evil)" \\`evil\\`',
      "cat <<'E'\n$(evil)\n`evil`\nE",
      'cat <<-E\n\thello\n\tE\necho done',
      'echo a#b # $(evil)',
      'ls \\\n  -la',
    ]) {
      t.equal(checker.check(command).ok, true, JSON.stringify(command));
      t.notMatch(ranUnder(command), /evil/, JSON.stringify(command));
    }
  },
);
