import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { renderConfigTable } from '../../src/config/index.js';
import { renderActionReference, TOOL_ACTION_NAMES } from '../../src/contract/index.js';
import {
  renderAllowlistTable,
  SENSITIVE_VARIABLES,
  SETTABLE_VARIABLES,
} from '../../src/workbench/allowlist/index.js';
import { runnerImageLabelPrograms } from '../support/runner-image.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const readme = readFileSync(resolve(root, 'README.md'), 'utf8');
const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

t.test('the README carries the current configuration table', async (t) => {
  t.ok(readme.includes(renderConfigTable().trim()), 'regenerate it with renderConfigTable()');
});

t.test('the README carries the current allowlist table', async (t) => {
  const table = renderAllowlistTable({ runnerImagePrograms: runnerImageLabelPrograms() });
  t.ok(readme.includes(table.trim()), 'regenerate it with renderAllowlistTable()');
});

t.test('the README carries the current action reference', async (t) => {
  const reference = renderActionReference();
  t.ok(readme.includes(reference), 'regenerate it with renderActionReference()');
  for (const action of TOOL_ACTION_NAMES) t.match(reference, `**\`${action}\`**`);
  t.notMatch(reference, '`build`', 'the system-only build is not offered');
});

t.test('the README names its two commands and they exist', async (t) => {
  for (const cmd of ['start', 'test']) {
    t.match(readme, `npm ${cmd}`);
    t.ok(pkg.scripts[cmd], `package.json has a "${cmd}" script`);
  }
});

t.test('every dependency is named in the README', async (t) => {
  const names = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)];
  const missing = names.filter((n) => !readme.includes(`\`${n}\``));
  t.same(missing, [], 'each dependency has a reason in the README');
});

t.test(
  'the sandbox section lists every refused variable and every settable look-alike',
  async (t) => {
    const names = [
      ...SENSITIVE_VARIABLES.map((r) => r.pattern),
      ...SETTABLE_VARIABLES.map((v) => v.name),
    ];
    const missing = names.filter((n) => !new RegExp(`\`${n}`, 'i').test(readme));
    t.same(missing, [], 'add them to the list under "Sandbox runners"');
  },
);
