import t from 'tap';
import {
  checkHostPath,
  checkName,
  NAME_MAX_BYTES,
  PATH_MAX_BYTES,
  pathLimitError,
  truncateForReport,
} from '../../src/files/path-limits.js';
import { splitWorkspacePath } from '../../src/files/safe-path.js';

t.test('names are measured in UTF-8 bytes against NAME_MAX', async (t) => {
  const cases: [string, string, ReturnType<typeof checkName>][] = [
    ['255 ASCII bytes', 'a'.repeat(255), null],
    ['256 ASCII bytes', 'a'.repeat(256), { reason: 'name_too_long', limit: 255, bytes: 256 }],
    ['127 two-byte characters', 'é'.repeat(127), null],
    [
      '128 two-byte characters',
      'é'.repeat(128),
      { reason: 'name_too_long', limit: 255, bytes: 256 },
    ],
    [
      '64 four-byte characters',
      '😀'.repeat(64),
      { reason: 'name_too_long', limit: 255, bytes: 256 },
    ],
    ['an empty name', '', null],
  ];
  for (const [what, name, want] of cases) t.same(checkName(name), want, what);
  t.equal(NAME_MAX_BYTES, 255);
});

t.test('a host path must leave room for its NUL within PATH_MAX', async (t) => {
  const cases: [string, string, ReturnType<typeof checkHostPath>][] = [
    ['4095 bytes', `/${'a'.repeat(4094)}`, null],
    ['4096 bytes', `/${'a'.repeat(4095)}`, { reason: 'path_too_long', limit: 4096, bytes: 4096 }],
    ['multi-byte', `/${'é'.repeat(2048)}`, { reason: 'path_too_long', limit: 4096, bytes: 4097 }],
    ['short', '/var/lib/memql/workbenches/run-1/a.txt', null],
  ];
  for (const [what, path, want] of cases) t.same(checkHostPath(path), want, what);
  t.equal(PATH_MAX_BYTES, 4096);
});

t.test('long paths are shortened around an ellipsis for reports', async (t) => {
  t.equal(truncateForReport('a/b/c.txt'), 'a/b/c.txt', 'short paths stay whole');
  const long = `${'x'.repeat(100)}/`.repeat(40);
  const shown = truncateForReport(long);
  t.ok(shown.length < 250, `shortened to ${shown.length} characters`);
  t.ok(shown.startsWith(long.slice(0, 100)), 'keeps the start');
  t.ok(shown.endsWith(long.slice(-40)), 'keeps the end');
  t.match(shown, '…');
});

t.test('the refusal is invalid_path naming the limit', async (t) => {
  const name = pathLimitError('dir/n', { reason: 'name_too_long', limit: 255, bytes: 300 });
  t.equal(name.code, 'invalid_path');
  t.same(name.payload, { path: 'dir/n', reason: 'name_too_long', limit: 255, bytes: 300 });
  t.match(name.message, /255 bytes \(NAME_MAX\)/);
  const path = pathLimitError('p'.repeat(4000), {
    reason: 'path_too_long',
    limit: 4096,
    bytes: 4100,
  });
  t.match(path.message, /4096 bytes \(PATH_MAX\)/);
  t.ok((path.payload as { path: string }).path.length < 250, 'the payload path is shortened');
});

t.test('splitting a workspace path refuses a name over NAME_MAX', async (t) => {
  t.same(splitWorkspacePath(`ok/${'a'.repeat(255)}`), ['ok', 'a'.repeat(255)]);
  t.throws(() => splitWorkspacePath(`ok/${'a'.repeat(256)}/x`), {
    code: 'invalid_path',
    payload: { reason: 'name_too_long', limit: 255, bytes: 256 },
  });
});
