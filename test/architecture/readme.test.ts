import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { renderConfigTable } from '../../src/config/index.js';
import {
  renderActionReference,
  renderErrorReference,
  TOOL_ACTION_NAMES,
} from '../../src/contract/index.js';
import {
  renderAllowlistTable,
  SENSITIVE_VARIABLES,
  SETTABLE_VARIABLES,
} from '../../src/workbench/allowlist/index.js';
import { runnerImageLabelPrograms } from '../support/runner-image.js';

/**
 * The README is a front page and the reference lives in `docs/`: the README stays
 * short, every link of the README and the docs resolves (the file, and the heading an
 * anchor names), and the generated parts of the docs are what the code renders now.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const read = (path: string) => readFileSync(resolve(root, path), 'utf8');
const readme = read('README.md');
const docs = readdirSync(resolve(root, 'docs')).filter((f) => f.endsWith('.md'));
const doc = (file: string) => read(`docs/${file}`);
const pkg = JSON.parse(read('package.json')) as {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** The README is a front page of about a hundred lines. */
const README_MAX_LINES = 200;

/** A heading's anchor as GitHub makes it. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown file's headings. */
function anchors(text: string): Set<string> {
  const out = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = /^#{1,6} (.+)$/.exec(line);
    if (m && !fenced) out.add(anchorOf(m[1]!));
  }
  return out;
}

t.test(`the README is a front page: at most ${README_MAX_LINES} lines`, async (t) => {
  const lines = readme.split('\n').length;
  t.ok(lines <= README_MAX_LINES, `${lines} lines; reference belongs in docs/`);
});

t.test('every link of the README and the docs resolves', async (t) => {
  const files = ['README.md', ...docs.map((f) => `docs/${f}`)];
  let checked = 0;
  for (const file of files) {
    const text = read(file);
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/.test(target)) continue;
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const resolved = path === '' ? file : resolve(dirname(resolve(root, file)), path);
      const at = path === '' ? resolve(root, file) : resolved;
      t.ok(existsSync(at), `${file}: ${target} names a file that exists`);
      if (anchor !== undefined && existsSync(at) && at.endsWith('.md')) {
        t.ok(anchors(readFileSync(at, 'utf8')).has(anchor), `${file}: ${target} names a heading`);
      }
      checked += 1;
    }
  }
  t.ok(checked > 50, `${checked} links checked`);
});

t.test('the README links every document', async (t) => {
  for (const file of docs) t.match(readme, `(docs/${file}`, `docs/${file} is linked`);
});

t.test('docs/configuration.md carries the current configuration table', async (t) => {
  t.ok(
    doc('configuration.md').includes(renderConfigTable().trim()),
    'regenerate it with renderConfigTable()',
  );
});

t.test('docs/security.md carries the current allowlist table', async (t) => {
  const table = renderAllowlistTable({ runnerImagePrograms: runnerImageLabelPrograms() });
  t.ok(doc('security.md').includes(table.trim()), 'regenerate it with renderAllowlistTable()');
});

t.test('docs/actions.md carries the current action reference', async (t) => {
  const reference = renderActionReference();
  t.ok(doc('actions.md').includes(reference), 'regenerate it with renderActionReference()');
  for (const action of TOOL_ACTION_NAMES) t.match(reference, `**\`${action}\`**`);
  t.notMatch(reference, '`build`', 'the system-only build is not offered');
});

t.test('docs/api.md carries the current error code table', async (t) => {
  const table = renderErrorReference();
  t.ok(doc('api.md').includes(table), 'regenerate it with renderErrorReference()');
  t.match(table, '| `unavailable` | 503 |', 'each code with its HTTP status');
});

t.test('the README names its two commands and they exist', async (t) => {
  for (const cmd of ['start', 'test']) {
    t.match(readme, `npm ${cmd}`);
    t.ok(pkg.scripts[cmd], `package.json has a "${cmd}" script`);
  }
});

t.test('every dependency is named in docs/dependencies.md', async (t) => {
  const text = doc('dependencies.md');
  const names = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)];
  const missing = names.filter((n) => !text.includes(`\`${n}\``));
  t.same(missing, [], 'each dependency has a reason in docs/dependencies.md');
});

t.test('docs/security.md lists every refused variable and every settable look-alike', async (t) => {
  const text = doc('security.md');
  const names = [
    ...SENSITIVE_VARIABLES.map((r) => r.pattern),
    ...SETTABLE_VARIABLES.map((v) => v.name),
  ];
  const missing = names.filter((n) => !new RegExp(`\`${n}`, 'i').test(text));
  t.same(missing, [], 'add them to the list under "Sandbox runners"');
});
