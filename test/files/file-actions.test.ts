import { execFileSync } from 'node:child_process';
import {
  link,
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { createServer } from 'node:net';
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
  openForRead,
} from '../../src/files/file-actions.js';
import type { FileType } from '../../src/files/file-type.js';
import { removeTree } from '../../src/files/index.js';
import { resolveWorkspacePath } from '../../src/files/safe-path.js';
import { makeDeepTree } from '../support/deep-tree.js';

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

t.test('FIFOs, sockets and devices are refused by type and never opened', async (t) => {
  execFileSync('mkfifo', [join(root, 'pipe')]);
  await symlink('pipe', join(root, 'pipe-link'));
  const sockets = createServer();
  await new Promise<void>((r) => sockets.listen(join(root, 'sock'), r));
  t.teardown(() => new Promise((r) => sockets.close(r)));

  const refusals: [string, FileType, () => Promise<unknown>][] = [
    ['fs_read a FIFO', 'fifo', () => fsRead(ctx, args('fs_read', { path: 'pipe' }))],
    ['fs_read a link to a FIFO', 'fifo', () => fsRead(ctx, args('fs_read', { path: 'pipe-link' }))],
    [
      'fs_write a FIFO',
      'fifo',
      () => fsWrite(ctx, args('fs_write', { path: 'pipe', content: 'x' })),
    ],
    [
      'fs_write append to a FIFO',
      'fifo',
      () => fsWrite(ctx, args('fs_write', { path: 'pipe', content: 'x', append: true })),
    ],
    ['open a FIFO to promote it', 'fifo', () => openForRead(ctx, 'pipe')],
    ['fs_read a socket', 'socket', () => fsRead(ctx, args('fs_read', { path: 'sock' }))],
    [
      'fs_write a socket',
      'socket',
      () => fsWrite(ctx, args('fs_write', { path: 'sock', content: 'x' })),
    ],
    ['fs_read a directory', 'directory', () => fsRead(ctx, args('fs_read', { path: 'pipe-dir' }))],
  ];
  await mkdir(join(root, 'pipe-dir'));
  for (const [name, fileType, run] of refusals) {
    await t.rejects(run(), { code: 'invalid_path', payload: { fileType } }, name);
  }
  const listed = await fsList(ctx, args('fs_list', {}));
  t.match(
    listed.entries.filter((e) => ['pipe', 'sock'].includes(e.path)),
    [{ type: 'other' }, { type: 'other' }],
    'listed without being opened',
  );
  t.match(await fsDelete(ctx, args('fs_delete', { path: 'pipe' })), { deleted: true });
  await t.rejects(lstat(join(root, 'pipe')), 'fs_delete removes a FIFO');
  await fsDelete(ctx, args('fs_delete', { path: 'pipe-link' }));
  await fsDelete(ctx, args('fs_delete', { path: 'pipe-dir' }));
});

t.test(
  'a device node is refused by type',
  { skip: process.getuid?.() !== 0 && 'mknod needs root' },
  async (t) => {
    execFileSync('mknod', [join(root, 'null-dev'), 'c', '1', '3']);
    t.teardown(() => rm(join(root, 'null-dev'), { force: true }));
    for (const run of [
      (): Promise<unknown> => fsRead(ctx, args('fs_read', { path: 'null-dev' })),
      () => fsWrite(ctx, args('fs_write', { path: 'null-dev', content: 'x' })),
    ]) {
      await t.rejects(run(), { code: 'invalid_path', payload: { fileType: 'device' } });
    }
  },
);

t.test('a file swapped for a FIFO while it is opened never blocks the open', async (t) => {
  const dir = join(root, 'swap');
  await mkdir(dir);
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  execFileSync('mkfifo', [join(dir, 'fifo')]);
  const seen = { ok: 0, refused: 0 };
  for (let i = 0; i < 100; i++) {
    await writeFile(join(dir, 'reg'), 'data');
    await rename(join(dir, 'reg'), join(dir, 'x'));
    const swap = async () => {
      await link(join(dir, 'fifo'), join(dir, 'fifo2'));
      await rename(join(dir, 'fifo2'), join(dir, 'x'));
    };
    const action: Promise<unknown> =
      i % 2 === 0
        ? fsRead(ctx, args('fs_read', { path: 'swap/x' }))
        : fsWrite(ctx, args('fs_write', { path: 'swap/x', content: 'data' }));
    const [answer] = await Promise.all([action.catch((err: unknown) => err), swap()]);
    if (answer instanceof Error) {
      t.match(answer, { code: 'invalid_path', payload: { fileType: 'fifo' } }, `round ${i}`);
      seen.refused += 1;
    } else {
      seen.ok += 1;
    }
  }
  t.equal(
    seen.ok + seen.refused,
    100,
    `every open answered (${seen.ok} ok, ${seen.refused} refused)`,
  );
});

t.test(
  'names over NAME_MAX and paths over PATH_MAX are invalid_path naming the limit',
  async (t) => {
    const long = 'n'.repeat(256);
    const name = {
      code: 'invalid_path',
      payload: { reason: 'name_too_long', limit: 255, bytes: 256 },
    };
    await t.rejects(fsWrite(ctx, args('fs_write', { path: long, content: 'x' })), name, 'fs_write');
    await t.rejects(fsRead(ctx, args('fs_read', { path: `a/${long}` })), name, 'fs_read');
    await t.rejects(fsList(ctx, args('fs_list', { path: long })), name, 'fs_list');
    await t.rejects(fsDelete(ctx, args('fs_delete', { path: long })), name, 'fs_delete');
    const ok = await fsWrite(ctx, args('fs_write', { path: 'n'.repeat(255), content: 'x' }));
    t.equal(ok.size, 1, 'a 255-byte name is fine');
    await fsDelete(ctx, args('fs_delete', { path: 'n'.repeat(255) }));

    // 18 names of 240 bytes: under the contract's 4096 characters, over PATH_MAX in bytes.
    const deep = Array.from({ length: 18 }, () => 'é'.repeat(120)).join('/');
    const tooLong = { code: 'invalid_path', payload: { reason: 'path_too_long', limit: 4096 } };
    await t.rejects(fsWrite(ctx, args('fs_write', { path: deep, content: 'x' })), tooLong);
    await t.rejects(fsRead(ctx, args('fs_read', { path: deep })), tooLong);
  },
);

t.test('a tree deeper than PATH_MAX is listed, refused and deleted', async (t) => {
  await mkdir(join(root, 'deep'));
  t.teardown(() => removeTree(join(root, 'deep')));
  // Two-byte names: 25 levels are 2,525 characters (within the contract) but over 5,000 bytes.
  const name = 'é'.repeat(100);
  const rel = `deep/${makeDeepTree(join(root, 'deep'), 25, name)}`;
  await fsWrite(ctx, args('fs_write', { path: 'deep/beside.txt', content: 'still here' }));
  const listed = await fsList(ctx, args('fs_list', { path: 'deep', recursive: true }));
  t.equal(listed.refused?.length, 1, 'the first entry too deep to reach is named');
  t.match(listed.refused?.[0], { reason: 'path_too_long', path: /^deep\/é+\/.*…/ });
  t.ok(listed.entries.some((e) => e.path === 'deep/beside.txt'));
  for (const path of [`${rel}/leaf.txt`, `${rel}/new.txt`]) {
    await t.rejects(fsRead(ctx, args('fs_read', { path })), {
      code: 'invalid_path',
      payload: { reason: 'path_too_long', limit: 4096 },
    });
    await t.rejects(fsWrite(ctx, args('fs_write', { path, content: 'x' })), {
      code: 'invalid_path',
      payload: { reason: 'path_too_long', limit: 4096 },
    });
  }
  await fsDelete(ctx, args('fs_delete', { path: 'deep', recursive: true }));
  await t.rejects(lstat(join(root, 'deep')), 'the whole tree is gone');
});
