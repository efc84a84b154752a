import { execFileSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { removeEntriesOf, removeTree } from '../../src/files/index.js';
import { makeDeepTree } from '../support/deep-tree.js';

const base = await mkdtemp(join(tmpdir(), 'memql-remove-'));
t.teardown(() => rm(base, { recursive: true, force: true }));
const outside = join(base, 'outside');
await mkdir(outside);
await writeFile(join(outside, 'keep.txt'), 'KEEP');

t.test('a tree deeper than PATH_MAX is removed whole', async (t) => {
  const dir = join(base, 'deep');
  await mkdir(dir);
  makeDeepTree(dir, 60);
  execFileSync('mkfifo', [join(dir, 'pipe')]);
  await removeTree(dir);
  await t.rejects(lstat(dir), { code: 'ENOENT' });
});

t.test('links inside are removed, never followed', async (t) => {
  const dir = join(base, 'links');
  await mkdir(join(dir, 'sub'), { recursive: true });
  await symlink(outside, join(dir, 'dir-link'));
  await symlink(join(outside, 'keep.txt'), join(dir, 'sub', 'file-link'));
  await symlink('../../outside', join(dir, 'sub', 'rel-link'));
  await removeTree(dir);
  await t.rejects(lstat(dir), { code: 'ENOENT' });
  t.equal(await readFile(join(outside, 'keep.txt'), 'utf8'), 'KEEP', 'the target is untouched');

  // The path given is a link itself: the link goes, not what it points at.
  await symlink(outside, join(base, 'top-link'));
  await removeTree(join(base, 'top-link'));
  await t.rejects(lstat(join(base, 'top-link')), { code: 'ENOENT' });
  t.equal(await readFile(join(outside, 'keep.txt'), 'utf8'), 'KEEP');
});

t.test(
  'entries are removed through their parent, even when their own path is too long',
  async (t) => {
    const dir = join(base, 'parent');
    await mkdir(dir);
    const rel = makeDeepTree(dir, 45);
    // The deepest directory whose own path still fits.
    const parts = rel.split('/');
    let keep = 0;
    while (Buffer.byteLength(join(dir, ...parts.slice(0, keep + 1))) < 4000) keep += 1;
    const parent = join(dir, ...parts.slice(0, keep));
    await writeFile(join(parent, 'beside.txt'), 'beside');
    await removeEntriesOf(parent, [parts[keep]!, 'missing-is-fine']);
    t.equal(await readFile(join(parent, 'beside.txt'), 'utf8'), 'beside', 'siblings stay');
    await t.rejects(lstat(join(parent, parts[keep]!)), { code: 'ENOENT' });
    await removeTree(dir);
  },
);

t.test('missing paths are fine; names must be single entries', async (t) => {
  await removeTree(join(base, 'never-made'));
  await removeEntriesOf(join(base, 'no-parent'), ['x']);
  await t.rejects(removeEntriesOf(base, ['a/b']), /single directory entry/);
  await t.rejects(removeEntriesOf(base, ['..']), /single directory entry/);
  t.ok(await lstat(outside), 'nothing else was touched');
});
