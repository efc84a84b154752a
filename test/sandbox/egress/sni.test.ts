import { type AddressInfo, createServer } from 'node:net';
import { connect } from 'node:tls';
import t from 'tap';
import { peekClientHello } from '../../../src/sandbox/egress/index.js';

// The ClientHello reader, on ClientHellos Node's own TLS client sends (captured by a
// loopback TCP server that never answers), reframed and broken in the ways a hostile
// client could.

/** The first TLS record a `tls.connect` with these options sends. */
async function captureHello(servername: string | undefined): Promise<Buffer> {
  const server = createServer();
  const got = new Promise<Buffer>((resolve) => {
    server.once('connection', (socket) => {
      let bytes = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        bytes = Buffer.concat([bytes, chunk]);
        // Read the record length independently of the code under test.
        if (bytes.length >= 5 && bytes.length >= 5 + bytes.readUInt16BE(3)) {
          resolve(bytes.subarray(0, 5 + bytes.readUInt16BE(3)));
          socket.destroy();
        }
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const client = connect({
    host: '127.0.0.1',
    port,
    ...(servername === undefined ? {} : { servername }),
    rejectUnauthorized: false,
  });
  client.on('error', () => {});
  const hello = await got;
  client.destroy();
  await new Promise((r) => server.close(r));
  return hello;
}

/** The handshake message of a one-record hello, split into records of `sizes` (the rest last). */
function reframe(hello: Buffer, sizes: number[]): Buffer {
  const message = hello.subarray(5);
  const records: Buffer[] = [];
  let at = 0;
  for (const size of [...sizes, message.length]) {
    if (at >= message.length) break;
    const part = message.subarray(at, Math.min(at + size, message.length));
    at += part.length;
    const head = Buffer.from([22, 3, 1, 0, 0]);
    head.writeUInt16BE(part.length, 3);
    records.push(head, part);
  }
  return Buffer.concat(records);
}

/** A synthetic ClientHello with these extensions (type, data) in one record. */
function syntheticHello(extensions: [number, Buffer][]): Buffer {
  const ext = Buffer.concat(
    extensions.map(([type, data]) => {
      const h = Buffer.alloc(4);
      h.writeUInt16BE(type, 0);
      h.writeUInt16BE(data.length, 2);
      return Buffer.concat([h, data]);
    }),
  );
  const extLen = Buffer.alloc(2);
  extLen.writeUInt16BE(ext.length);
  const body = Buffer.concat([
    Buffer.from([3, 3]),
    Buffer.alloc(32, 7), // random
    Buffer.from([0]), // session id
    Buffer.from([0, 2, 0x13, 0x01]), // one cipher suite
    Buffer.from([1, 0]), // null compression
    extLen,
    ext,
  ]);
  const hs = Buffer.concat([Buffer.from([1, 0, body.length >> 8, body.length & 0xff]), body]);
  const rec = Buffer.from([22, 3, 1, 0, 0]);
  rec.writeUInt16BE(hs.length, 3);
  return Buffer.concat([rec, hs]);
}

function sniData(...names: string[]): Buffer {
  const entries = Buffer.concat(
    names.map((n) => {
      const h = Buffer.from([0, 0, 0]);
      h.writeUInt16BE(n.length, 1);
      return Buffer.concat([h, Buffer.from(n, 'latin1')]);
    }),
  );
  const len = Buffer.alloc(2);
  len.writeUInt16BE(entries.length);
  return Buffer.concat([len, entries]);
}

t.test("Node's ClientHellos: the name it sends, or none", async (t) => {
  const rows: [string | undefined, string | null][] = [
    ['pkgs.test', 'pkgs.test'],
    ['registry.npmjs.org', 'registry.npmjs.org'],
    [
      `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.test`,
      `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.test`,
    ],
    // To an address without a servername, Node sends no SNI at all.
    [undefined, null],
  ];
  for (const [servername, expected] of rows) {
    const hello = await captureHello(servername);
    t.same(
      peekClientHello(hello),
      { kind: 'hello', serverName: expected },
      `servername ${servername}`,
    );
  }
});

t.test(
  'every prefix of a ClientHello is incomplete, and bytes after it do not matter',
  async (t) => {
    const hello = await captureHello('pkgs.test');
    let wrong = 0;
    for (let n = 0; n < hello.length; n++) {
      if (peekClientHello(hello.subarray(0, n)).kind !== 'incomplete') wrong += 1;
    }
    t.equal(wrong, 0, `all ${hello.length} prefixes`);
    t.same(peekClientHello(Buffer.concat([hello, Buffer.from('trailing bytes')])), {
      kind: 'hello',
      serverName: 'pkgs.test',
    });
  },
);

t.test('a ClientHello spread over several records is read whole', async (t) => {
  const hello = await captureHello('pkgs.test');
  for (const sizes of [[1], [3], [4], [60], [100, 1], [2, 2, 2, 2, 50]]) {
    const framed = reframe(hello, sizes);
    t.same(
      peekClientHello(framed),
      { kind: 'hello', serverName: 'pkgs.test' },
      `fragments ${sizes}`,
    );
    t.equal(peekClientHello(framed.subarray(0, framed.length - 1)).kind, 'incomplete');
  }
});

t.test('bytes that are not a TLS handshake', async (t) => {
  for (const text of [
    'GET / HTTP/1.1\r\nHost: pkgs.test\r\n\r\n',
    'SSH-2.0-OpenSSH_9.2\r\n',
    '\x16\x02\x00',
  ]) {
    t.same(peekClientHello(Buffer.from(text, 'latin1')), { kind: 'not_tls' }, JSON.stringify(text));
  }
  // An SSLv2-style hello (the high bit of the first byte set).
  t.same(peekClientHello(Buffer.from([0x80, 0x2e, 0x01, 0x03, 0x01])), { kind: 'not_tls' });
});

t.test('malformed handshakes', async (t) => {
  const hello = await captureHello('pkgs.test');
  const rows: [string, Buffer][] = [
    ['an empty record', Buffer.from([22, 3, 1, 0, 0])],
    ['a record longer than TLS allows', Buffer.from([22, 3, 1, 0x48, 0x01])],
    ['a ServerHello', Buffer.from([22, 3, 3, 0, 4, 2, 0, 0, 0])],
    [
      'an alert between fragments',
      Buffer.concat([reframe(hello, [10]).subarray(0, 15), Buffer.from([21, 3, 3, 0, 2, 2, 40])]),
    ],
    ['a ClientHello claiming 16 MiB', Buffer.from([22, 3, 1, 0, 4, 1, 0xff, 0xff, 0xff])],
    [
      'two server_name extensions',
      syntheticHello([
        [0, sniData('pkgs.test')],
        [0, sniData('evil.test')],
      ]),
    ],
    ['two host names in one extension', syntheticHello([[0, sniData('pkgs.test', 'evil.test')]])],
    ['a server name with a space', syntheticHello([[0, sniData('pkgs .test')]])],
    ['an empty server name', syntheticHello([[0, sniData('')]])],
  ];
  for (const [name, bytes] of rows) {
    t.equal(peekClientHello(bytes).kind, 'malformed', name);
  }
  // Extension lengths that overrun the ClientHello: cut the message short and patch
  // the handshake and record lengths to match, so only the extensions are wrong.
  const cut = Buffer.from(hello.subarray(0, hello.length - 3));
  cut.writeUInt16BE(cut.length - 5, 3);
  cut.writeUIntBE(cut.length - 9, 6, 3);
  t.equal(peekClientHello(cut).kind, 'malformed', 'extensions longer than the message');
});

t.test('a synthetic ClientHello without extensions, and with other extensions only', async (t) => {
  t.same(peekClientHello(syntheticHello([[10, Buffer.from([0, 2, 0, 29])]])), {
    kind: 'hello',
    serverName: null,
  });
  t.same(peekClientHello(syntheticHello([[0, sniData('pkgs.test')]])), {
    kind: 'hello',
    serverName: 'pkgs.test',
  });
});
