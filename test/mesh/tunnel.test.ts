import t from 'tap';
import type { DataFrame } from '../../src/mesh/frames.js';
import { OUTPUT_CHUNK_BYTES, TUNNEL_WINDOW_BYTES } from '../../src/mesh/limits.js';
import { TunnelEnd } from '../../src/mesh/tunnel.js';

/**
 * Two tunnel ends joined in memory, as a stream joins them: each one's frames reach the
 * other in order, on a later turn of the event loop. Counts the chunk bytes each sent.
 */
function pair() {
  const sent = { a: 0, b: 0, frames: [] as DataFrame[] };
  const closed: { a: Error | null | undefined; b: Error | null | undefined } = {
    a: undefined,
    b: undefined,
  };
  let a: TunnelEnd;
  let b: TunnelEnd;
  const link = (from: 'a' | 'b', to: () => TunnelEnd) => async (frame: DataFrame) => {
    sent[from] += frame.chunk.length;
    sent.frames.push(frame);
    await new Promise<void>((resolve) => setImmediate(resolve));
    to().receive(frame);
  };
  a = new TunnelEnd(
    '1',
    link('a', () => b),
    (err) => {
      closed.a = err;
    },
  );
  b = new TunnelEnd(
    '1',
    link('b', () => a),
    (err) => {
      closed.b = err;
    },
  );
  return { a, b, sent, closed };
}

/**
 * Everything an end reads until its read side ends; the end stays open (an async
 * iterator would destroy it, and with it the other direction).
 */
function readAll(end: TunnelEnd): Promise<Buffer> {
  const parts: Buffer[] = [];
  return new Promise((resolve, reject) => {
    end.on('data', (part: Buffer) => parts.push(part));
    end.once('end', () => resolve(Buffer.concat(parts)));
    end.once('error', reject);
  });
}

/** Lets every frame in flight arrive: delivery is a chain of event-loop turns. */
async function settle(turns = 50): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

const pattern = (n: number, seed: number) => {
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) out[i] = (i * 7 + seed) % 251;
  return out;
};

t.test('bytes go both ways, in order, and each side ends its own direction', async (t) => {
  const { a, b, sent } = pair();
  const toB = pattern(3 * TUNNEL_WINDOW_BYTES + 123, 1);
  const toA = pattern(OUTPUT_CHUNK_BYTES * 2 + 9, 2);
  const readB = readAll(b);
  a.end(toB);
  t.ok((await readB).equals(toB), 'what a wrote, b read whole');
  // a's side is ended; b still writes to a (half-close).
  const readA = readAll(a);
  b.end(toA);
  t.ok((await readA).equals(toA), 'what b wrote after a ended, a read whole');
  t.ok(
    sent.frames.every((f) => f.chunk.length <= OUTPUT_CHUNK_BYTES),
    'no chunk over the output chunk size',
  );
  t.equal(sent.frames.filter((f) => f.eof).length, 2, 'one eof each way');
});

t.test('a reader that does not read holds its sender to one window', async (t) => {
  const { a, b, sent } = pair();
  const data = pattern(5 * TUNNEL_WINDOW_BYTES, 3);
  let written = false;
  a.write(data, () => {
    written = true;
  });
  a.end();
  await settle();
  t.ok(sent.a <= TUNNEL_WINDOW_BYTES, `at most a window in flight (${sent.a} bytes sent)`);
  t.ok(sent.a >= TUNNEL_WINDOW_BYTES - OUTPUT_CHUNK_BYTES, 'and the window filled');
  t.notOk(written, 'the write waits for the reader');
  t.ok((await readAll(b)).equals(data), 'once b reads, all of it arrives');
  t.ok(written, 'and the write completed');
});

t.test('destroying an end closes it once, with its error', async (t) => {
  const { a, b, closed } = pair();
  const reading = readAll(b).catch((err: Error) => err);
  a.on('error', () => {});
  a.write('x');
  a.destroy(new Error('caller went away'));
  t.match(closed.a, { message: 'caller went away' }, 'the owner is told');
  b.over(null);
  t.ok(Buffer.isBuffer(await reading), 'the other end, told the tunnel is over, ends its read');
  t.equal(closed.b, undefined, 'an end the tunnel ended normally does not report a close');
  const failed = pair();
  const failedRead = readAll(failed.b).catch((err: Error) => err);
  failed.b.on('error', () => {});
  failed.b.over(new Error('refused'));
  t.match(await failedRead, { message: 'refused' }, 'a tunnel that failed fails its reader');
  let refusedWrite: Error | null | undefined;
  failed.b.write('late', (err) => {
    refusedWrite = err;
  });
  await settle();
  t.ok(refusedWrite, 'a write after the tunnel failed fails');
});
