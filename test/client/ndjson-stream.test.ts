import t from 'tap';
import {
  ClientError,
  NdjsonSplitter,
  parseStreamEvent,
  readDispatchStream,
} from '../../src/client/index.js';

const lines = [
  JSON.stringify({
    type: 'output',
    stream: 'stdout',
    data: Buffer.from('héllo ✓\n').toString('base64'),
  }),
  JSON.stringify({
    type: 'output',
    stream: 'stderr',
    data: Buffer.from('warn\n').toString('base64'),
  }),
  JSON.stringify({
    type: 'result',
    result: { ok: true, payload: { commandId: 'c1', exitCode: 3, note: 'naïve ✓' } },
  }),
];
const wire = Buffer.from(`${lines.join('\n')}\n`);

async function* chunksOf(bytes: Buffer, size: number) {
  for (let i = 0; i < bytes.length; i += size) yield new Uint8Array(bytes.subarray(i, i + size));
}

t.test('the splitter yields the same lines whatever the chunk boundaries', async (t) => {
  for (let size = 1; size <= wire.length; size += size < 8 ? 1 : 13) {
    const splitter = new NdjsonSplitter();
    const got: string[] = [];
    for (let i = 0; i < wire.length; i += size)
      got.push(...splitter.push(wire.subarray(i, i + size)));
    got.push(...splitter.end());
    t.same(got, lines, `chunks of ${size} bytes`);
  }
});

t.test('the splitter drops blank lines and CRs and keeps an unterminated last line', async (t) => {
  const splitter = new NdjsonSplitter();
  t.same(splitter.push(Buffer.from('{"a":1}\r\n\n\n{"b"')), ['{"a":1}']);
  t.same(splitter.push(Buffer.from(':2}')), []);
  t.same(splitter.end(), ['{"b":2}']);
  t.same(splitter.end(), [], 'end is idempotent');
});

t.test('the splitter does not keep a reference to a chunk the caller reuses', async (t) => {
  const splitter = new NdjsonSplitter();
  const chunk = Buffer.from('{"x":"ab');
  splitter.push(chunk);
  chunk.fill(0x20);
  t.same(splitter.push(Buffer.from('c"}\n')), ['{"x":"abc"}']);
});

t.test('readDispatchStream delivers output in order and returns the result', async (t) => {
  for (const size of [1, 2, 3, 7, 64, wire.length]) {
    const seen: string[] = [];
    const result = await readDispatchStream(chunksOf(wire, size), (stream, chunk) =>
      seen.push(`${stream}:${chunk.toString('utf8')}`),
    );
    t.same(seen, ['stdout:héllo ✓\n', 'stderr:warn\n'], `chunks of ${size}`);
    t.same(result, { ok: true, payload: { commandId: 'c1', exitCode: 3, note: 'naïve ✓' } });
  }
});

t.test('a failed result is returned, not thrown', async (t) => {
  const failure = { ok: false, errorCode: 'command_not_allowed', message: 'no' };
  const body = Buffer.from(`${JSON.stringify({ type: 'result', result: failure })}\n`);
  t.same(await readDispatchStream(chunksOf(body, 5), () => {}), failure);
});

t.test('a stream that ends without a result is unavailable', async (t) => {
  const err = await readDispatchStream(chunksOf(Buffer.from(`${lines[0]}\n`), 4), () => {}).catch(
    (e: unknown) => e,
  );
  t.ok(err instanceof ClientError);
  t.equal((err as ClientError).code, 'unavailable');
});

t.test('malformed lines are internal errors naming the problem', async (t) => {
  const cases: [string, RegExp][] = [
    ['not json', /not JSON/],
    ['[1,2]', /not an object/],
    ['{"type":"output","stream":"stdin","data":""}', /unknown output stream/],
    ['{"type":"output","stream":"stdout"}', /output without data/],
    ['{"type":"result","result":{"ok":false}}', /not a dispatch result/],
    ['{"type":"progress"}', /unknown type "progress"/],
  ];
  for (const [line, why] of cases) {
    const err = (() => {
      try {
        parseStreamEvent(line);
        return null;
      } catch (e) {
        return e;
      }
    })();
    t.ok(err instanceof ClientError, line);
    t.equal((err as ClientError).code, 'internal', line);
    t.match((err as ClientError).message, why, line);
  }
});
