import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import t, { type Test } from 'tap';
import { codeBlocks, commandLines, REPO_ROOT, readmeSection } from '../support/readme.js';

/**
 * The README's two command lines: the first sets up and starts a node, the second sets
 * up and runs the tests. Each `npm run` script is the setup script whose header quotes
 * that line, the quickstart starts the node with the first, and CI (`.ci/run`) runs
 * exactly the second, after printing its toolchain.
 */

const pkg = JSON.parse(readFileSync(resolve(REPO_ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};
const read = (path: string) => readFileSync(resolve(REPO_ROOT, path), 'utf8');

const [block] = codeBlocks(readmeSection('Two commands'), 'sh');
if (block === undefined) throw new Error('README "Two commands" has no sh block');
const lines = commandLines(block);
const [startLine = '', testLine = ''] = lines;

/** The script file an `npm run <name>` runs with bash. */
function scriptFile(t: Test, name: string): string {
  const script = pkg.scripts[name];
  const file = /^bash (scripts\/[\w./-]+\.sh)$/.exec(script ?? '')?.[1];
  t.ok(file, `package.json's "${name}" runs a script under scripts/ with bash (is: ${script})`);
  return file ?? '';
}

/** The comment lines at the top of a shell script, without their `#`. */
function header(text: string): string {
  const comments: string[] = [];
  for (const line of text.split('\n').slice(1)) {
    if (!line.startsWith('#')) break;
    comments.push(line.replace(/^#\s?/, '').trim());
  }
  return comments.join('\n');
}

t.test('the README gives two command lines: set up then start, set up then test', async (t) => {
  t.equal(lines.length, 2, `two lines: ${JSON.stringify(lines)}`);
  t.match(startLine, /^npm run [\w:-]+ && npm start$/);
  t.match(testLine, /^npm run [\w:-]+ && npm test$/);
});

for (const [line, last] of [
  [startLine, 'npm start'],
  [testLine, 'npm test'],
] as const) {
  t.test(`"${line}": its setup script's header quotes the line`, async (t) => {
    const name = /^npm run ([\w:-]+) && /.exec(line)?.[1] ?? '';
    const file = scriptFile(t, name);
    t.ok(pkg.scripts[last.slice('npm '.length)], `package.json has "${last}"`);
    const quoted = header(read(file)).split('\n');
    t.ok(quoted.includes(line), `${file}'s header quotes "${line}"`);
  });
}

t.test('.ci/run runs exactly the README second command line', async (t) => {
  const run = read('.ci/run');
  const body = commandLines(run);
  t.ok(body.includes('set -euo pipefail'), 'it stops at the first failure');
  t.ok(
    body.includes('node --version') && body.includes('npm --version'),
    'it prints the toolchain',
  );
  const preamble =
    /^(set -euo pipefail|cd "\$\(dirname "\$0"\)\/\.\."|log\(\) \{.*\}|log ".*"|node --version|npm --version)$/;
  t.same(
    body.filter((l) => !preamble.test(l)),
    [testLine],
    'beyond its preamble, .ci/run is the README line',
  );
});

t.test('the quickstart starts the node with the README first command line', async (t) => {
  const start = codeBlocks(readmeSection('Quickstart'), 'sh').find((b) => b.includes('npm start'));
  t.same(commandLines(start ?? ''), [startLine]);
});
