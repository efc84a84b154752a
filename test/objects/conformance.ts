/**
 * The behaviour every ObjectStore must show, run against each implementation by
 * its own test file. `makeStore` returns a store over fresh, empty storage and
 * registers its teardown on the test it is given.
 */

import { Readable } from 'node:stream';
import type { Test } from 'tap';
import { getBytes } from '../../src/objects/get-bytes.js';
import { compareObjectKeys } from '../../src/objects/object-key.js';
import type {
  ListObjectsOptions,
  ObjectInfo,
  ObjectStore,
} from '../../src/objects/object-store.js';
import { patternBytes, patternSha256, patternStream, streamSha256 } from './byte-pattern.js';

/** Builds a store over fresh storage, torn down when `t` ends. */
export type MakeStore = (t: Test) => Promise<ObjectStore>;

const MiB = 1024 * 1024;

/** Keys that break the key rules, each with why. */
export const INVALID_KEYS: ReadonlyArray<[key: string, why: string]> = [
  ['', 'empty'],
  ['/abs', 'leading slash'],
  ['//abs', 'leading slashes'],
  ['a\\b', 'backslash'],
  ['a\0b', 'NUL'],
  ['a//b', 'empty segment'],
  ['a/', 'trailing slash'],
  ['.', 'dot'],
  ['..', 'dot-dot'],
  ['./a', 'leading dot segment'],
  ['a/./b', 'inner dot segment'],
  ['../a', 'leading dot-dot segment'],
  ['a/../b', 'inner dot-dot segment'],
  ['a/..', 'trailing dot-dot segment'],
  ['k'.repeat(1025), 'over 1024 bytes'],
  ['é'.repeat(513), 'over 1024 bytes of UTF-8 in 513 characters'],
];

/** Prefixes no valid key can start with. */
const INVALID_PREFIXES = ['/a', 'a\\', 'a\0', 'a//', './', '../', 'a/../', 'a/./b'];

/** Registers the conformance tests on `t`. */
export function objectStoreConformance(t: Test, makeStore: MakeStore): void {
  t.test('put and get bytes', async (t) => {
    const store = await makeStore(t);
    const body = Buffer.from('hello, workbench\n');
    t.same(await store.put('docs/hello.txt', body, { contentType: 'text/plain' }), {
      size: body.length,
    });
    t.equal((await getBytes(store, 'docs/hello.txt')).toString('hex'), body.toString('hex'));
    const plain = new Uint8Array([0, 1, 2, 250, 255]);
    t.same(await store.put('docs/plain.bin', plain), { size: 5 });
    t.same([...(await getBytes(store, 'docs/plain.bin'))], [0, 1, 2, 250, 255]);
  });

  t.test('put from a stream of unknown length', async (t) => {
    const store = await makeStore(t);
    const stream = Readable.from([
      Buffer.from('alpha-'),
      Buffer.from('beta-'),
      Buffer.from('gamma'),
    ]);
    t.same(await store.put('s/buffers', stream), { size: 16 });
    t.equal((await getBytes(store, 's/buffers')).toString(), 'alpha-beta-gamma');
    t.same(await store.put('s/strings', Readable.from(['on', 'e ', 'two'])), { size: 7 });
    t.equal((await getBytes(store, 's/strings')).toString(), 'one two');
    const declared = Readable.from([Buffer.from('12345')]);
    t.same(await store.put('s/declared', declared, { contentLength: 5 }), { size: 5 });
    t.equal((await getBytes(store, 's/declared')).toString(), '12345');
  });

  t.test('a body of another length than declared stores nothing', async (t) => {
    const store = await makeStore(t);
    await t.rejects(
      store.put('m/short', Readable.from([Buffer.from('abc')]), { contentLength: 4 }),
      {
        code: 'object_size_mismatch',
      },
    );
    await t.rejects(store.put('m/long', Buffer.from('abcde'), { contentLength: 4 }), {
      code: 'object_size_mismatch',
    });
    t.equal(await store.head('m/short'), null);
    t.equal(await store.head('m/long'), null);
    await store.put('m/keep', Buffer.from('old'));
    await t.rejects(store.put('m/keep', Buffer.from('newer'), { contentLength: 3 }), {
      code: 'object_size_mismatch',
    });
    t.equal((await getBytes(store, 'm/keep')).toString(), 'old');
    t.same(await listAll(store, 'm/'), ['m/keep']);
  });

  t.test('get with a byte range', async (t) => {
    const store = await makeStore(t);
    const whole = patternBytes(0, 1000);
    await store.put('r/obj', whole);
    const cases: Array<[offset: number, length: number | undefined, expected: Buffer]> = [
      [0, undefined, whole],
      [100, undefined, whole.subarray(100)],
      [10, 20, whole.subarray(10, 30)],
      [0, 1, whole.subarray(0, 1)],
      [999, 1, whole.subarray(999)],
      [990, 50, whole.subarray(990)],
      [500, 0, Buffer.alloc(0)],
      [1000, undefined, Buffer.alloc(0)],
      [5000, 10, Buffer.alloc(0)],
    ];
    for (const [offset, length, expected] of cases) {
      const range = length === undefined ? { offset } : { offset, length };
      const got = await getBytes(store, 'r/obj', range);
      t.equal(got.toString('hex'), expected.toString('hex'), `range ${JSON.stringify(range)}`);
    }
    await t.rejects(store.get('r/missing', { offset: 3 }), { code: 'object_not_found' });
    await t.rejects(store.get('r/missing', { offset: 3, length: 0 }), { code: 'object_not_found' });
    await t.rejects(store.get('r/obj', { offset: -1 }), RangeError);
    await t.rejects(store.get('r/obj', { offset: 0, length: 1.5 }), RangeError);
  });

  t.test('head of a present and a missing object', async (t) => {
    const store = await makeStore(t);
    const before = Date.now();
    await store.put('h/seven', Buffer.from('7 bytes'));
    const info = await store.head('h/seven');
    t.equal(info?.key, 'h/seven');
    t.equal(info?.size, 7);
    t.ok(info?.lastModified instanceof Date);
    // S3 keeps whole seconds, so allow the truncation.
    const modified = info?.lastModified.getTime() ?? 0;
    t.ok(modified >= before - 2000 && modified <= Date.now() + 2000, 'lastModified is now');
    t.equal(await store.head('h/absent'), null);
    t.equal(await store.head('h'), null, 'a prefix of keys is not an object');
  });

  t.test('get of a missing object fails with object_not_found', async (t) => {
    const store = await makeStore(t);
    await store.put('g/present/leaf', Buffer.from('x'));
    await t.rejects(store.get('g/absent'), { code: 'object_not_found', key: 'g/absent' });
    await t.rejects(getBytes(store, 'g/absent/deeper'), { code: 'object_not_found' });
    await t.rejects(store.get('g/present'), { code: 'object_not_found' });
  });

  t.test('invalid keys are refused by every operation', async (t) => {
    const store = await makeStore(t);
    await store.put('valid/key', Buffer.from('kept'));
    const invalid = { code: 'invalid_object_key' };
    for (const [key, why] of INVALID_KEYS) {
      await t.rejects(store.put(key, Buffer.from('x')), invalid, `put: ${why}`);
      await t.rejects(store.get(key), invalid, `get: ${why}`);
      await t.rejects(store.head(key), invalid, `head: ${why}`);
      await t.rejects(store.copy(key, 'valid/copy'), invalid, `copy from: ${why}`);
      await t.rejects(store.copy('valid/key', key), invalid, `copy to: ${why}`);
      await t.rejects(store.deleteMany(['valid/key', key]), invalid, `deleteMany: ${why}`);
    }
    for (const prefix of INVALID_PREFIXES) {
      await t.rejects(store.list(prefix), invalid, `list prefix ${JSON.stringify(prefix)}`);
    }
    t.equal((await getBytes(store, 'valid/key')).toString(), 'kept', 'nothing was deleted');
    t.same(await listAll(store, ''), ['valid/key'], 'nothing was written');
  });

  t.test('unusual but valid keys round-trip', async (t) => {
    const store = await makeStore(t);
    const long = `long/${Array.from({ length: 5 }, (_, i) => `${i}`.repeat(180)).join('/')}`;
    const keys = ['.hidden', 'a..b/...', 'sp ace/ünï cødé ✓.txt', 'x=1&y=2/$@!', long];
    for (const key of keys) await store.put(key, Buffer.from(key));
    for (const key of keys) t.equal((await getBytes(store, key)).toString(), key);
    t.same(await listAll(store, ''), [...keys].sort(compareObjectKeys));
  });

  t.test('list pages through more keys than the default page', async (t) => {
    const store = await makeStore(t);
    const keys = Array.from({ length: 1100 }, (_, i) => `bulk/${String(i).padStart(4, '0')}`);
    const outsiders = ['bulk-x', 'bulkhead/y', 'bul'];
    await putAll(store, shuffled([...keys, ...outsiders]));

    const first = await store.list('bulk/');
    t.equal(first.items.length, 1000, 'a full default page');
    t.type(first.nextCursor, 'string');
    const second = await store.list('bulk/', { cursor: first.nextCursor as string });
    t.equal(second.items.length, 100);
    t.equal(second.nextCursor, undefined, 'the last page has no cursor');
    const listed = [...first.items, ...second.items];
    t.same(
      listed.map((item) => item.key),
      keys,
    );
    t.ok(
      listed.every((item) => item.size === item.key.length),
      'sizes',
    );

    const pages = await listPages(store, 'bulk/', { limit: 300 });
    t.same(
      pages.map((page) => page.length),
      [300, 300, 300, 200],
    );
    t.same(pages.flat(), keys);
    t.same(
      (await listPages(store, 'bulk/', { limit: 550 })).map((page) => page.length),
      [550, 550],
      'a page that ends exactly at the end has no cursor',
    );
    const plain = await listPages(store, 'bulk', { limit: 2000 });
    t.same(plain.length, 1, 'a limit above 1000 still fills one page');
    t.same(plain.flat(), ['bulk-x', ...keys, 'bulkhead/y'], 'a prefix is a plain string');

    await store.deleteMany([...keys, 'bulk/absent', 'bulk/9999']);
    t.same(await store.list('bulk/'), { items: [] });
    t.same(await listAll(store, ''), ['bul', 'bulk-x', 'bulkhead/y']);
  });

  t.test('list returns keys in UTF-8 byte order', async (t) => {
    const store = await makeStore(t);
    const keys = [
      'ord/a-b',
      'ord/a.txt',
      'ord/a/b',
      'ord/a/c/d',
      'ord/a0',
      'ord/B',
      'ord/b',
      'ord/é',
      'ord/\uFFFD',
      'ord/\u{1F600}',
      'ord/~',
    ];
    await putAll(store, shuffled(keys));
    const expected = [
      'ord/B',
      'ord/a-b',
      'ord/a.txt',
      'ord/a/b',
      'ord/a/c/d',
      'ord/a0',
      'ord/b',
      'ord/~',
      'ord/é',
      'ord/\uFFFD',
      'ord/\u{1F600}',
    ];
    t.same(await listAll(store, 'ord/'), expected);
    const underA = ['ord/a-b', 'ord/a.txt', 'ord/a/b', 'ord/a/c/d', 'ord/a0'];
    t.same(await listAll(store, 'ord/a'), underA);
    t.same(await listAll(store, 'ord/a/'), ['ord/a/b', 'ord/a/c/d']);
    t.same(await listAll(store, 'ord/a/c'), ['ord/a/c/d']);
    t.same(await store.list('ord/zz'), { items: [] });
    t.same(await store.list('elsewhere/'), { items: [] });
    // Paged over ASCII keys only: s3rver compares StartAfter as UTF-16, unlike S3.
    t.same((await listPages(store, 'ord/a', { limit: 2 })).flat(), underA);
    t.same((await listPages(store, 'ord/a', { limit: 1 })).flat(), underA);
    await t.rejects(store.list('ord/', { limit: 0 }), RangeError);
  });

  t.test('deleteMany removes present keys and ignores absent ones', async (t) => {
    const store = await makeStore(t);
    await putAll(store, ['d/1', 'd/2', 'd/3', 'keep/1']);
    await store.deleteMany(['d/1', 'd/3', 'd/absent', 'd/1', 'never/was']);
    t.equal(await store.head('d/1'), null);
    t.equal(await store.head('d/3'), null);
    await t.rejects(store.get('d/1'), { code: 'object_not_found' });
    t.same(await listAll(store, ''), ['d/2', 'keep/1']);
    await store.deleteMany([]);
    await store.deleteMany(['d/absent']);
    t.equal((await getBytes(store, 'd/2')).toString(), 'd/2');
  });

  t.test('deletePrefix removes everything under a prefix, and nothing else', async (t) => {
    const store = await makeStore(t);
    const many = Array.from({ length: 2503 }, (_, i) => `gone/p/${String(i).padStart(5, '0')}`);
    await putAll(store, [...many, 'gone/q/1', 'gone/pp', 'gonex/1', 'keep/gone/p/1']);
    t.equal(await store.deletePrefix('gone/p/'), many.length, 'a directory-like prefix, 3 pages');
    t.same(await listAll(store, 'gone/'), ['gone/pp', 'gone/q/1']);
    t.equal(await store.deletePrefix('gone/p'), 1, 'a plain string prefix takes gone/pp');
    t.same(await listAll(store, ''), ['gone/q/1', 'gonex/1', 'keep/gone/p/1']);
    t.equal(await store.deletePrefix('absent/'), 0);
    t.equal(await store.deletePrefix('gone/q/1/'), 0, 'an object is not a directory');
    t.ok(await store.head('gone/q/1'));
  });

  t.test('copy duplicates an object and leaves the source', async (t) => {
    const store = await makeStore(t);
    await store.put('c/src', Buffer.from('source bytes'));
    await store.put('c/dst', Buffer.from('old destination'));
    await store.copy('c/src', 'c/dst');
    t.equal((await getBytes(store, 'c/dst')).toString(), 'source bytes');
    await store.copy('c/src', 'c/new/deeper');
    t.equal((await getBytes(store, 'c/new/deeper')).toString(), 'source bytes');
    t.equal((await getBytes(store, 'c/src')).toString(), 'source bytes');
    await store.copy('c/src', 'c/src');
    t.equal((await getBytes(store, 'c/src')).toString(), 'source bytes', 'copy onto itself');
    await store.put('c/src', Buffer.from('changed'));
    t.equal((await getBytes(store, 'c/dst')).toString(), 'source bytes', 'a copy, not a link');
  });

  t.test('copy of a missing source fails with object_not_found', async (t) => {
    const store = await makeStore(t);
    await store.put('c/dst', Buffer.from('untouched'));
    await t.rejects(store.copy('c/missing', 'c/dst'), {
      code: 'object_not_found',
      key: 'c/missing',
    });
    await t.rejects(store.copy('c/missing', 'c/fresh'), { code: 'object_not_found' });
    await t.rejects(store.copy('c/missing', 'c/missing'), { code: 'object_not_found' });
    t.equal((await getBytes(store, 'c/dst')).toString(), 'untouched');
    t.equal(await store.head('c/fresh'), null);
  });

  t.test('put replaces an existing object', async (t) => {
    const store = await makeStore(t);
    await store.put('o/k', patternBytes(0, 100));
    await store.put('o/k', Buffer.from('new'));
    t.equal((await getBytes(store, 'o/k')).toString(), 'new', 'no bytes of the old object remain');
    t.equal((await store.head('o/k'))?.size, 3);
    t.same(
      (await store.list('o/')).items.map((item) => [item.key, item.size]),
      [['o/k', 3]],
    );
  });

  t.test('empty objects', async (t) => {
    const store = await makeStore(t);
    t.same(await store.put('e/bytes', new Uint8Array(0)), { size: 0 });
    t.same(await store.put('e/stream', Readable.from([])), { size: 0 });
    for (const key of ['e/bytes', 'e/stream']) {
      t.equal((await getBytes(store, key)).length, 0);
      t.equal((await getBytes(store, key, { offset: 0 })).length, 0);
      t.equal((await getBytes(store, key, { offset: 0, length: 5 })).length, 0);
      t.equal((await store.head(key))?.size, 0);
    }
    t.same(
      (await store.list('e/')).items.map((item) => [item.key, item.size]),
      [
        ['e/bytes', 0],
        ['e/stream', 0],
      ],
    );
  });

  t.test('a 20 MB object round-trips byte for byte', async (t) => {
    const store = await makeStore(t);
    const size = 20 * MiB;
    t.same(await store.put('big/blob', patternStream(size)), { size });
    t.equal((await store.head('big/blob'))?.size, size);
    t.same(await streamSha256(await store.get('big/blob')), { sha256: patternSha256(size), size });
    for (const [offset, length] of [
      [8 * MiB - 5, 10],
      [16 * MiB - 1, 2],
      [size - 7, 100],
    ] as const) {
      const got = await getBytes(store, 'big/blob', { offset, length });
      const expected = patternBytes(offset, Math.min(length, size - offset));
      t.equal(got.toString('hex'), expected.toString('hex'), `range at ${offset}`);
    }
  });
}

/** Every key under `prefix`, following cursors. */
export async function listAll(store: ObjectStore, prefix: string): Promise<string[]> {
  return (await listPages(store, prefix, {})).flat();
}

/** The keys of each page under `prefix`, following cursors. */
export async function listPages(
  store: ObjectStore,
  prefix: string,
  opts: Omit<ListObjectsOptions, 'cursor'>,
): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(prefix, cursor === undefined ? opts : { ...opts, cursor });
    pages.push(page.items.map((item: ObjectInfo) => item.key));
    cursor = page.nextCursor;
    if (pages.length > 10_000) throw new Error('listing does not end');
  } while (cursor !== undefined);
  return pages;
}

/** Stores each key with its own name as the body, a few at a time. */
export async function putAll(store: ObjectStore, keys: string[], concurrency = 32): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < keys.length) {
      const key = keys[next++] as string;
      await store.put(key, Buffer.from(key));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

function shuffled<T>(items: T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}
