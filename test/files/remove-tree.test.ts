import { execFile, execFileSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { hostHelpers, MAX_HELPERS } from '../../src/files/host-helper.js';
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

t.test('rm runs from a long-lived helper process, not from the node', async (t) => {
  const make = async (name: string) => {
    const dir = join(base, name);
    await mkdir(join(dir, 'a b', 'ü'), { recursive: true });
    await writeFile(join(dir, 'a b', 'ü', 'f'), 'x');
    return dir;
  };
  await removeTree(await make('h0'));
  const first = hostHelpers.pids();
  t.equal(first.length, 1, 'one helper serves removals one at a time');
  for (let i = 1; i <= 5; i++) {
    const dir = await make(`h${i}`);
    await removeTree(dir);
    await t.rejects(lstat(dir), { code: 'ENOENT' });
  }
  t.same(hostHelpers.pids(), first, 'the same helper, not a process per removal');

  const dirs = await Promise.all(Array.from({ length: 12 }, (_, i) => make(`c${i}`)));
  await Promise.all(dirs.map((d) => removeTree(d)));
  for (const d of dirs) await t.rejects(lstat(d), { code: 'ENOENT' });
  t.ok(hostHelpers.pids().length <= MAX_HELPERS, 'removals at once share a bounded set of helpers');

  // A helper that dies is replaced; its removal is still done.
  hostHelpers.killAll();
  const after = await make('after-kill');
  await removeTree(after);
  await t.rejects(lstat(after), { code: 'ENOENT' });
  t.notOk(
    hostHelpers.pids().some((p) => first.includes(p)),
    "a new helper took the dead one's place",
  );
  t.equal(await readFile(join(outside, 'keep.txt'), 'utf8'), 'KEEP');
});

t.test("rm's failure comes back with its exit code and message", async (t) => {
  const failed = await hostHelpers.rm('/usr/bin/false', base, ['x']);
  t.same(failed, { code: 1, stderr: '' });
  const lost = await hostHelpers.rm('/usr/bin/rm', join(base, 'no-such-dir'), ['x']);
  t.equal(lost?.code, 1);
  t.match(lost?.stderr, /cannot enter .*no-such-dir/);
});

t.test('an idle helper does not keep a process alive', async (t) => {
  const dir = join(base, 'exit');
  await mkdir(join(dir, 'sub'), { recursive: true });
  const module = new URL('../../src/files/index.js', import.meta.url).href;
  const script = `const m = await import(${JSON.stringify(module)}); await m.removeTree(${JSON.stringify(dir)});`;
  const code = await new Promise<number | null>((resolve) => {
    const child = execFile(process.execPath, ['--input-type=module', '-e', script]);
    child.on('exit', (c) => resolve(c));
  });
  t.equal(code, 0, 'the process ended on its own once the removal was done');
  await t.rejects(lstat(dir), { code: 'ENOENT' });
});
