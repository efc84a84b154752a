import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  type CheckResult,
  createCommandChecker,
  createSystemPathResolver,
} from '../../../src/workbench/allowlist/checker.js';

/**
 * Programs given by path, against the real filesystem: only an absolute path to the
 * very file the bare name runs passes. A copy of a shell named `ls` never does.
 */

const summary = (r: CheckResult) => (r.ok ? 'ok' : [r.reason, r.name]);

const dir = mkdtempSync(join(tmpdir(), 'exec-allowlist-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

// A workspace with a copy of the shell named ls, and symlinks to the real ls.
const workspace = join(dir, 'ws');
mkdirSync(join(workspace, 'bin'), { recursive: true });
copyFileSync('/bin/sh', join(workspace, 'ls'));
copyFileSync('/bin/sh', join(workspace, 'bin', 'ls'));
symlinkSync('/usr/bin/ls', join(workspace, 'myls'));
mkdirSync(join(workspace, 'link'));
symlinkSync('/usr/bin/ls', join(workspace, 'link', 'ls'));

t.test('names given by path, checked against the system binary directories', async (t) => {
  const checker = await createCommandChecker({ resolvePath: createSystemPathResolver() });
  const cases: [string, ReturnType<typeof summary>][] = [
    ['/usr/bin/ls -la', 'ok'],
    ['./ls', ['path_mismatch', './ls']],
    ['bin/ls', ['path_mismatch', 'bin/ls']],
    // Relative paths are refused even when they reach the real file: the workspace
    // can be changed by the command itself between the check and the run.
    ['./myls', ['not_allowed', './myls']],
    ['./link/ls', ['path_mismatch', './link/ls']],
    [`${workspace}/ls`, ['path_mismatch', `${workspace}/ls`]],
    [`${workspace}/link/ls`, ['path_mismatch', `${workspace}/link/ls`]],
    ['cd bin && ./ls', ['path_mismatch', './ls']],
    ['/usr/bin/env sh', ['not_allowed', 'sh']],
    ['/bin/sh -c ls', ['not_allowed', '/bin/sh']],
    ['/usr/bin/nosuchprogram', ['not_allowed', '/usr/bin/nosuchprogram']],
    ['/usr/bin/../bin/ls', ['path_mismatch', '/usr/bin/../bin/ls']],
    ['env /usr/bin/ls', 'ok'],
    ['ls $(./ls)', ['path_mismatch', './ls']],
  ];
  if (existsSync('/bin/ls')) cases.push(['/bin/ls', 'ok']);
  if (existsSync('/usr/bin/python3')) cases.push(["/usr/bin/python3 -c 'print(1)'", 'ok']);
  for (const [command, expected] of cases) {
    t.same(summary(checker.check(command)), expected, command);
  }
  const r = checker.check(`${workspace}/ls`);
  t.match(r.ok ? '' : r.message, /not the system "ls"/);
});

t.test('without a resolver, names given by path are refused', async (t) => {
  const checker = await createCommandChecker();
  t.same(summary(checker.check('/usr/bin/ls')), ['path_mismatch', '/usr/bin/ls']);
  t.same(summary(checker.check('ls')), 'ok');
});

t.test('a per-call resolver overrides the checker one', async (t) => {
  const checker = await createCommandChecker({ resolvePath: createSystemPathResolver() });
  const no = () => ({ sameAsSystemBinary: false, detail: 'test says no' });
  const r = checker.check('/usr/bin/ls', { resolvePath: no });
  t.same(summary(r), ['path_mismatch', '/usr/bin/ls']);
  t.match(r.ok ? '' : r.message, /test says no/);
});

t.test('the resolver compares device and inode with the first match in search order', async (t) => {
  const first = join(dir, 'first');
  const second = join(dir, 'second');
  mkdirSync(first);
  mkdirSync(second);
  copyFileSync('/bin/sh', join(first, 'tool'));
  copyFileSync('/bin/sh', join(second, 'tool'));
  symlinkSync(join(first, 'tool'), join(first, 'alias'));
  symlinkSync(join(first, 'tool'), join(second, 'alias'));
  const resolve = createSystemPathResolver({ binDirs: [first, second] });

  t.same(resolve(join(first, 'tool')), { sameAsSystemBinary: true });
  t.equal(resolve(join(second, 'tool')).sameAsSystemBinary, false, 'a copy is another file');
  t.match(resolve(join(second, 'tool')).detail, /the system tool is/);
  t.same(resolve(join(first, 'alias')), { sameAsSystemBinary: true }, 'symlinks are followed');
  t.same(resolve(join(second, 'alias')), { sameAsSystemBinary: true });
  t.equal(resolve(join(first, 'missing')).sameAsSystemBinary, false);
  t.equal(
    resolve(`${first}/../first/tool`).sameAsSystemBinary,
    false,
    'not literally <dir>/<name>',
  );
  t.equal(resolve(join(dir, 'tool')).sameAsSystemBinary, false, 'not a system directory');
  t.equal(resolve('tool').sameAsSystemBinary, false);
});
