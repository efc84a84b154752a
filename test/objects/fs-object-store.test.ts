import {
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import t, { type Test } from 'tap';
import { createObjectStore } from '../../src/objects/create-object-store.js';
import { FsObjectStore } from '../../src/objects/fs-object-store.js';
import { getBytes, readAll } from '../../src/objects/get-bytes.js';
import { failingStream, patternBytes } from './byte-pattern.js';
import { listAll, objectStoreConformance } from './conformance.js';

async function freshBaseDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'memql-fs-objects-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function freshStore(t: Test): Promise<{ store: FsObjectStore; baseDir: string }> {
  const baseDir = await freshBaseDir(t);
  return { store: new FsObjectStore({ baseDir }), baseDir };
}

/** Names in the store's temp folder; a finished or failed write leaves none. */
async function tempFiles(baseDir: string): Promise<string[]> {
  return readdir(join(baseDir, '.tmp'));
}

objectStoreConformance(t, async (t) => (await freshStore(t)).store);

t.test('objects are plain files under <baseDir>/objects', async (t) => {
  const { store, baseDir } = await freshStore(t);
  await store.put('runs/r1/notes.txt', Buffer.from('readable by an operator'));
  const onDisk = await readFile(join(baseDir, 'objects', 'runs', 'r1', 'notes.txt'), 'utf8');
  t.equal(onDisk, 'readable by an operator');
  t.same(await tempFiles(baseDir), []);
});

t.test('symlinks inside the store never lead a key outside it', async (t) => {
  const { store, baseDir } = await freshStore(t);
  const outside = await freshBaseDir(t);
  await writeFile(join(outside, 'victim.txt'), 'outside');
  await store.put('inside/ok', Buffer.from('ok'));
  const objects = join(baseDir, 'objects');
  await symlink(outside, join(objects, 'escape'));
  await symlink(join(outside, 'victim.txt'), join(objects, 'link.txt'));
  await symlink(outside, join(objects, 'inside', 'nested'));

  const refused = { code: 'invalid_object_key' };
  for (const key of ['escape/victim.txt', 'link.txt', 'inside/nested/victim.txt']) {
    await t.rejects(store.get(key), refused, `get ${key}`);
    await t.rejects(store.head(key), refused, `head ${key}`);
    await t.rejects(store.put(key, Buffer.from('written')), refused, `put ${key}`);
    await t.rejects(store.deleteMany([key]), refused, `deleteMany ${key}`);
    await t.rejects(store.copy(key, 'inside/copy'), refused, `copy from ${key}`);
    await t.rejects(store.copy('inside/ok', key), refused, `copy to ${key}`);
  }
  await t.rejects(store.put('escape/new/deep.txt', Buffer.from('x')), refused);
  await t.rejects(store.put('inside/nested/new.txt', Buffer.from('x')), refused);

  t.same(await readdir(outside), ['victim.txt'], 'nothing created outside');
  t.equal(await readFile(join(outside, 'victim.txt'), 'utf8'), 'outside', 'nothing changed');
  t.same(await listAll(store, ''), ['inside/ok'], 'links are not listed');
  t.same(await store.list('escape/'), { items: [] });
  t.equal(await store.head('inside/copy'), null);
  t.same(await tempFiles(baseDir), []);
});

t.test('a failed stream write leaves no object and no temp file', async (t) => {
  const { store, baseDir } = await freshStore(t);
  const boom = new Error('body failed');
  await t.rejects(store.put('w/new', failingStream(3 * 1024 * 1024, boom)), boom);
  t.equal(await store.head('w/new'), null);
  t.same(await listAll(store, ''), []);
  t.same(await tempFiles(baseDir), []);

  await store.put('w/old', Buffer.from('previous'));
  const again = new Error('failed again');
  await t.rejects(store.put('w/old', failingStream(1024 * 1024, again)), again);
  t.equal((await getBytes(store, 'w/old')).toString(), 'previous', 'the old object is intact');
  t.same(await listAll(store, ''), ['w/old']);
  t.same(await tempFiles(baseDir), []);
});

t.test('an aborted stream write leaves no object and no temp file', async (t) => {
  const { store, baseDir } = await freshStore(t);
  const body = new Readable({ read() {} });
  body.push(patternBytes(0, 64 * 1024));
  setTimeout(() => body.destroy(), 20);
  await t.rejects(store.put('w/aborted', body));
  t.equal(await store.head('w/aborted'), null);
  t.same(await tempFiles(baseDir), []);
});

t.test('a body of the wrong declared length leaves no temp file', async (t) => {
  const { store, baseDir } = await freshStore(t);
  await t.rejects(store.put('w/k', patternBytes(0, 1000), { contentLength: 999 }), {
    code: 'object_size_mismatch',
  });
  t.same(await tempFiles(baseDir), []);
});

t.test('a reader keeps the object it opened while it is replaced', async (t) => {
  const { store } = await freshStore(t);
  const before = patternBytes(0, 2 * 1024 * 1024);
  await store.put('a/obj', before);
  const reading = await store.get('a/obj');
  await store.put('a/obj', Buffer.from('after'));
  t.equal((await readAll(reading)).toString('hex'), before.toString('hex'));
  t.equal((await getBytes(store, 'a/obj')).toString(), 'after');
});

t.test('concurrent writers of one key leave one whole body', async (t) => {
  const { store, baseDir } = await freshStore(t);
  const bodies = Array.from({ length: 8 }, (_, i) => Buffer.alloc(512 * 1024, 65 + i));
  await Promise.all(bodies.map((body) => store.put('race/key', Readable.from([body]))));
  const stored = await getBytes(store, 'race/key');
  t.ok(
    bodies.some((body) => body.equals(stored)),
    'the stored object is exactly one of the bodies',
  );
  t.same(await tempFiles(baseDir), []);
});

t.test('a key cannot be both an object and a prefix of other keys', async (t) => {
  const { store, baseDir } = await freshStore(t);
  await store.put('k', Buffer.from('file'));
  await t.rejects(store.put('k/child', Buffer.from('x')), { code: 'object_key_conflict' });
  await store.put('dir/child', Buffer.from('x'));
  await t.rejects(store.put('dir', Buffer.from('x')), { code: 'object_key_conflict' });
  await t.rejects(store.copy('k', 'dir'), { code: 'object_key_conflict' });
  t.same(await listAll(store, ''), ['dir/child', 'k']);
  t.same(await tempFiles(baseDir), []);
});

t.test('a segment too long for the filesystem is an invalid key', async (t) => {
  const { store } = await freshStore(t);
  const key = `long/${'s'.repeat(300)}`;
  await t.rejects(store.put(key, Buffer.from('x')), { code: 'invalid_object_key' });
});

t.test('deleting the last object of a directory removes the empty directories', async (t) => {
  const { store, baseDir } = await freshStore(t);
  await store.put('p/q/r/one', Buffer.from('1'));
  await store.put('p/two', Buffer.from('2'));
  await store.deleteMany(['p/q/r/one']);
  t.same(await readdir(join(baseDir, 'objects', 'p')), ['two']);
  await store.deleteMany(['p/two']);
  t.same(await readdir(join(baseDir, 'objects')), []);
  await store.put('p/q/again', Buffer.from('3'));
  t.equal((await getBytes(store, 'p/q/again')).toString(), '3');
});

t.test('an unusable base directory is object_store_unavailable', async (t) => {
  const dir = await freshBaseDir(t);
  const file = join(dir, 'not-a-directory');
  await writeFile(file, 'x');
  const store = new FsObjectStore({ baseDir: join(file, 'store') });
  await t.rejects(store.put('a', Buffer.from('x')), { code: 'object_store_unavailable' });
  await t.rejects(store.list(''), { code: 'object_store_unavailable' });
  const objects = join(dir, 'store', 'objects');
  await mkdir(join(dir, 'store'));
  await writeFile(objects, 'a file where the objects directory goes');
  const blocked = new FsObjectStore({ baseDir: join(dir, 'store') });
  await t.rejects(blocked.head('a'), { code: 'object_store_unavailable' });
  t.ok((await stat(objects)).isFile());
});

t.test('createObjectStore builds a filesystem store from plain settings', async (t) => {
  const baseDir = await freshBaseDir(t);
  const store = createObjectStore({ kind: 'fs', baseDir: join(baseDir, 'nested', 'store') });
  await store.put('made/by-factory', Buffer.from('yes'));
  t.equal(
    await readFile(join(baseDir, 'nested', 'store', 'objects', 'made', 'by-factory'), 'utf8'),
    'yes',
  );
});

t.test('temp files left by a process that died mid-write are cleared', async (t) => {
  const baseDir = await freshBaseDir(t);
  await mkdir(join(baseDir, '.tmp'), { recursive: true });
  const stale = join(baseDir, '.tmp', 'stale.part');
  const recent = join(baseDir, '.tmp', 'recent.part');
  await writeFile(stale, 'left behind');
  await writeFile(recent, 'maybe still being written');
  const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
  await utimes(stale, twoHoursAgo, twoHoursAgo);
  const store = new FsObjectStore({ baseDir });
  t.equal(await store.head('anything'), null);
  t.same(await tempFiles(baseDir), ['recent.part']);
});
