import t from 'tap';
import {
  compareObjectKeys,
  MAX_OBJECT_KEY_BYTES,
  validateListPrefix,
  validateObjectKey,
} from '../../src/objects/object-key.js';
import { INVALID_KEYS } from './conformance.js';

t.test('the key rules', async (t) => {
  for (const [key, why] of INVALID_KEYS) {
    t.throws(() => validateObjectKey(key), { code: 'invalid_object_key' }, why);
  }
  const valid = ['a', 'a/b', '.hidden', 'a..b', '...', 'a b/ü/✓', 'x'.repeat(MAX_OBJECT_KEY_BYTES)];
  for (const key of valid) t.doesNotThrow(() => validateObjectKey(key), key.slice(0, 20));
  t.doesNotThrow(() => validateObjectKey('é'.repeat(512)), '1024 bytes of two-byte characters');
});

t.test('the prefix rules', async (t) => {
  for (const prefix of ['', 'a', 'a/', 'a/b', 'a/b.', 'a/..x', 'a/.', 'a/..']) {
    t.doesNotThrow(() => validateListPrefix(prefix), JSON.stringify(prefix));
  }
  for (const prefix of [
    '/a',
    'a\\',
    'a\0',
    'a//',
    './',
    '../',
    'a/../',
    'a/./b',
    'x'.repeat(1025),
  ]) {
    t.throws(
      () => validateListPrefix(prefix),
      { code: 'invalid_object_key' },
      JSON.stringify(prefix),
    );
  }
});

t.test('keys order by UTF-8 bytes, not UTF-16 code units', async (t) => {
  const astral = '\u{1F600}';
  const lastBmp = '\uFFFD';
  t.ok(astral < lastBmp, 'JavaScript puts the astral character first');
  t.ok(compareObjectKeys(lastBmp, astral) < 0, 'UTF-8 puts it last, as S3 does');
  t.ok(compareObjectKeys('a-b', 'a/b') < 0);
  t.ok(compareObjectKeys('a/b', 'a0') < 0);
  t.equal(compareObjectKeys('same', 'same'), 0);
});
