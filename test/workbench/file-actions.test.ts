import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ACTION_SCHEMAS, type ActionArgs } from '../../src/contract/index.js';
import {
  type FileContext,
  fsDelete,
  fsList,
  fsRead,
  fsWrite,
} from '../../src/workbench/file-actions.js';
import { resolveWorkspacePath } from '../../src/workbench/safe-path.js';

const base = await mkdtemp(join(tmpdir(), 'memql-files-'));
t.teardown(() => rm(base, { recursive: true, force: true }));

// The workspace, a secret beside it, and a sibling whose name extends the root's.
const root = join(base, 'run1');
const outside = join(base, 'outside');
const sibling = join(base, 'run1-evil');
await mkdir(root);
await mkdir(outside);
await mkdir(sibling);
await writeFile(join(outside, 'secret.txt'), 'SECRET');
await writeFile(join(sibling, 'loot.txt'), 'LOOT');

const ctx: FileContext = { root, maxReadBytes: 1024 * 1024, maxWriteBytes: 4 * 1024 * 1024 };

function args<A extends 'fs_write' | 'fs_read' | 'fs_list' | 'fs_delete'>(
  action: A,
  input: Record<string, unknown>,
): ActionArgs<A> {
  return ACTION_SCHEMAS[action].parse(input) as ActionArgs<A>;
}

t.test('write, read, list, delete round trip', async (t) => {
  const w = await fsWrite(ctx, args('fs_write', { path: 'a/b/c.txt', content: 'hello' }));
  t.same(w, { path: 'a/b/c.txt', bytesWritten: 5, size: 5 });
  await fsWrite(ctx, args('fs_write', { path: 'a/b/c.txt', content: ' world', append: true }));
  const r = await fsRead(ctx, args('fs_read', { path: 'a/b/c.txt' }));
  t.equal(r.content, 'hello world');
  t.equal(r.eof, true);
  const part = await fsRead(ctx, args('fs_read', { path: 'a/b/c.txt', offset: 6, length: 3 }));
  t.equal(part.content, 'wor');
  t.equal(part.eof, false);

  const bin = Buffer.from([0, 255, 1, 2]);
  await fsWrite(
    ctx,
    args('fs_write', { path: 'bin.dat', content: bin.toString('base64'), encoding: 'base64' }),
  );
  t.same(await readFile(join(root, 'bin.dat')), bin, 'base64 content lands as bytes');
  const rb = await fsRead(ctx, args('fs_read', { path: 'bin.dat', encoding: 'base64' }));
  t.equal(rb.content, bin.toString('base64'));

  await fsWrite(ctx, args('fs_write', { path: 'run.sh', content: '#!/bin/sh\n', mode: '755' }));
  t.equal((await stat(join(root, 'run.sh'))).mode & 0o777, 0o755, 'mode is applied');

  const flat = await fsList(ctx, args('fs_list', {}));
  t.same(
    flat.entries.map((e) => `${e.type}:${e.path}`),
    ['directory:a', 'file:bin.dat', 'file:run.sh'],
  );
  const deep = await fsList(ctx, args('fs_list', { path: '.', recursive: true }));
  t.ok(deep.entries.some((e) => e.path === 'a/b/c.txt' && e.type === 'file' && e.size === 11));
  const limited = await fsList(ctx, args('fs_list', { recursive: true, limit: 2 }));
  t.equal(limited.entries.length, 2);
  t.equal(limited.truncated, true);

  await t.rejects(fsDelete(ctx, args('fs_delete', { path: 'a' })), { code: 'invalid_arguments' });
  t.ok(await stat(join(root, 'a/b/c.txt')), 'a non-empty directory survives without recursive');
  await fsDelete(ctx, args('fs_delete', { path: 'a', recursive: true }));
  await t.rejects(stat(join(root, 'a')));
  await t.rejects(fsRead(ctx, args('fs_read', { path: 'a/b/c.txt' })), { code: 'path_not_found' });
  await t.rejects(fsDelete(ctx, args('fs_delete', { path: 'nope' })), { code: 'path_not_found' });
});

t.test('size limits answer payload_too_large', async (t) => {
  const small: FileContext = { ...ctx, maxReadBytes: 4, maxWriteBytes: 8 };
  await t.rejects(fsWrite(small, args('fs_write', { path: 'big', content: '123456789' })), {
    code: 'payload_too_large',
  });
  await fsWrite(small, args('fs_write', { path: 'big', content: '12345678' }));
  await t.rejects(fsWrite(small, args('fs_write', { path: 'big', content: '9', append: true })), {
    code: 'payload_too_large',
  });
  await t.rejects(fsRead(small, args('fs_read', { path: 'big' })), { code: 'payload_too_large' });
  const ok = await fsRead(small, args('fs_read', { path: 'big', offset: 4, length: 4 }));
  t.equal(ok.content, '5678', 'a range within the limit is fine');
});

t.test('paths that name nothing inside the workspace are invalid_path', async (t) => {
  const bad = ['', '/etc/passwd', '../outside/secret.txt', 'a/../../outside', 'x\0y', '..', '.'];
  for (const path of bad) {
    await t.rejects(
      resolveWorkspacePath(root, path),
      { code: 'invalid_path' },
      JSON.stringify(path),
    );
  }
  const fine = await resolveWorkspacePath(root, './x/../y//z/');
  t.equal(fine.rel, 'y/z', 'dot segments that stay inside are normalized');
  t.equal(fine.abs, join(root, 'y/z'));
});

t.test('symlinks are never a way out', async (t) => {
  await symlink('/', join(root, 'r'));
  await symlink(join(outside, 'new.txt'), join(root, 'new.txt'));
  await symlink('../outside', join(root, 'esc'));
  await symlink('../run1-evil', join(root, 'sib'));
  await symlink(outside, join(root, 'abs-dir'));
  await mkdir(join(root, 'inner'));
  await writeFile(join(root, 'inner/ok.txt'), 'inside');
  await symlink('inner/ok.txt', join(root, 'good-link'));
  await symlink('loop-b', join(root, 'loop-a'));
  await symlink('loop-a', join(root, 'loop-b'));

  const cases: [string, () => Promise<unknown>][] = [
    ['fs_read r/etc/passwd', () => fsRead(ctx, args('fs_read', { path: 'r/etc/passwd' }))],
    [
      'fs_write through a dangling link',
      () => fsWrite(ctx, args('fs_write', { path: 'new.txt', content: 'x' })),
    ],
    ['fs_read esc/secret.txt', () => fsRead(ctx, args('fs_read', { path: 'esc/secret.txt' }))],
    [
      'fs_write esc/planted',
      () => fsWrite(ctx, args('fs_write', { path: 'esc/planted', content: 'x' })),
    ],
    ['fs_read sibling with suffix', () => fsRead(ctx, args('fs_read', { path: 'sib/loot.txt' }))],
    ['fs_list esc', () => fsList(ctx, args('fs_list', { path: 'esc' }))],
    ['fs_list abs-dir', () => fsList(ctx, args('fs_list', { path: 'abs-dir' }))],
    [
      'fs_delete esc/secret.txt',
      () => fsDelete(ctx, args('fs_delete', { path: 'esc/secret.txt' })),
    ],
    ['link loop', () => fsRead(ctx, args('fs_read', { path: 'loop-a' }))],
  ];
  for (const [name, run] of cases) {
    await t.rejects(run(), { code: 'invalid_path' }, name);
  }
  t.equal(await readFile(join(outside, 'secret.txt'), 'utf8'), 'SECRET');
  await t.rejects(stat(join(outside, 'new.txt')), 'nothing was created through the dangling link');
  await t.rejects(stat(join(outside, 'planted')), 'nothing was planted outside');

  const good = await fsRead(ctx, args('fs_read', { path: 'good-link' }));
  t.equal(good.content, 'inside', 'a link that stays inside is followed');

  await fsDelete(ctx, args('fs_delete', { path: 'esc/', recursive: true }));
  t.equal(
    await readFile(join(outside, 'secret.txt'), 'utf8'),
    'SECRET',
    'recursive delete of a link removes the link, not what it points at',
  );
  await t.rejects(stat(join(root, 'esc')), 'the link itself is gone');
  await fsDelete(ctx, args('fs_delete', { path: 'r' }));
  t.ok(await stat('/etc/passwd'), 'deleting a link to / deletes only the link');
  t.ok(await stat(join(sibling, 'loot.txt')));
});
