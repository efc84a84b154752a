import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import t from 'tap';
import { createCommandOutput, drainInto, OutputCapture } from '../../src/sandbox/output-capture.js';

t.test('keeps exactly the cap and counts the rest', async (t) => {
  const kept: string[] = [];
  const c = new OutputCapture(5, (chunk) => kept.push(chunk.toString()));
  c.write(Buffer.from('abc'));
  t.equal(c.truncated, false);
  c.write(Buffer.from('defgh'));
  c.write(Buffer.from('ijk'));
  t.equal(c.bytes().toString(), 'abcde');
  t.equal(c.truncated, true);
  t.equal(c.totalBytes, 11);
  t.same(kept, ['abc', 'de'], 'the callback sees only kept bytes');
});

t.test('exactly at the cap is not truncated; a zero cap keeps nothing', async (t) => {
  const c = new OutputCapture(3);
  c.write(Buffer.from('abc'));
  t.same([c.bytes().toString(), c.truncated], ['abc', false]);
  const z = new OutputCapture(0);
  z.write(Buffer.from('x'));
  t.same([z.bytes().length, z.truncated], [0, true]);
  const empty = new OutputCapture(0);
  t.equal(empty.truncated, false);
  t.throws(() => new OutputCapture(-1), RangeError);
  t.throws(() => new OutputCapture(1.5), RangeError);
});

t.test('a kept slice does not retain the large chunk it came from', async (t) => {
  const c = new OutputCapture(4);
  const big = Buffer.alloc(1 << 20, 1);
  c.write(big);
  t.equal(c.bytes().buffer === big.buffer, false);
  t.equal(c.bytes().length, 4);
});

t.test('drainInto reads a stream to its end; sink() feeds the capture', async (t) => {
  const c = new OutputCapture(10);
  await drainInto(Readable.from([Buffer.from('0123456789'), Buffer.from('more')]), c);
  t.same([c.bytes().toString(), c.truncated, c.totalBytes], ['0123456789', true, 14]);

  const s = new OutputCapture(3);
  await pipeline(Readable.from([Buffer.from('ab'), Buffer.from('cd')]), s.sink());
  t.same([s.bytes().toString(), s.truncated], ['abc', true]);

  const broken = new Readable({ read() {} });
  const done = drainInto(broken, new OutputCapture(1));
  broken.destroy(new Error('pipe broke'));
  await done;
  t.pass('an erroring stream ends the drain');
});

t.test('createCommandOutput tags each stream for onOutput', async (t) => {
  const seen: string[] = [];
  const out = createCommandOutput(2, (stream, chunk) => seen.push(`${stream}:${chunk}`));
  out.stdout.write(Buffer.from('abc'));
  out.stderr.write(Buffer.from('x'));
  t.same(seen, ['stdout:ab', 'stderr:x']);
});
