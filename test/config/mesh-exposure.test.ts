import t from 'tap';
import {
  isLoopbackHost,
  type MeshConfig,
  type MeshExposure,
  meshExposure,
} from '../../src/config/index.js';

const TOKEN = '0123456789abcdef';
const IDENTITY = { certFile: '/tls/node.pem', keyFile: '/tls/node.key' };
const OPEN: MeshConfig = { token: null, tls: null, insecure: false };

t.test('loopback hosts', async (t) => {
  const cases: ReadonlyArray<readonly [string, boolean]> = [
    ['127.0.0.1', true],
    ['127.0.0.2', true],
    ['127.255.255.254', true],
    ['::1', true],
    ['0:0:0:0:0:0:0:1', true],
    ['::ffff:127.0.0.1', true],
    ['localhost', true],
    ['LocalHost', true],
    ['0.0.0.0', false],
    ['::', false],
    ['128.0.0.1', false],
    ['126.255.255.255', false],
    ['10.0.0.5', false],
    ['192.168.1.20', false],
    ['fd00::1', false],
    ['::2', false],
    ['::ffff:10.0.0.5', false],
    ['workbench', false],
    ['localhost.example.com', false],
    // A zone picks an interface; the address is still ::1.
    ['::1%lo', true],
    ['::ffff:7f00:1', true],
    // IPv6 forms that carry 127.0.0.1 but are other IPv6 addresses, not the IPv4 socket.
    ['::127.0.0.1', false],
    ['::ffff:0:127.0.0.1', false],
    ['64:ff9b::7f00:1', false],
    ['2002:7f00:1::1', false],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', false],
    // Only plain dotted decimal is an IPv4 address here; inet_aton spellings are not.
    ['127.1', false],
    ['0177.0.0.1', false],
    ['2130706433', false],
    ['127.0.0.01', false],
    ['[::1]', false],
    ['', false],
  ];
  for (const [host, loopback] of cases) t.equal(isLoopbackHost(host), loopback, host);
});

t.test('the decision, by address and authentication', async (t) => {
  const cases: ReadonlyArray<readonly [string, string, Partial<MeshConfig>, MeshExposure['kind']]> =
    [
      ['loopback v4, nothing set', '127.0.0.1', {}, 'loopback'],
      ['loopback v4 elsewhere in /8', '127.0.0.2', {}, 'loopback'],
      ['loopback v6, nothing set', '::1', {}, 'loopback'],
      ['localhost, nothing set', 'localhost', {}, 'loopback'],
      ['every IPv4 interface, nothing set', '0.0.0.0', {}, 'refused'],
      ['every IPv6 interface, nothing set', '::', {}, 'refused'],
      ['a LAN address, nothing set', '192.168.1.20', {}, 'refused'],
      ['a host name, nothing set', 'workbench', {}, 'refused'],
      ['every interface with a token', '0.0.0.0', { token: TOKEN }, 'token'],
      ['a LAN address with a token', '192.168.1.20', { token: TOKEN }, 'token'],
      [
        'a TLS identity without a CA',
        '0.0.0.0',
        { tls: { identity: IDENTITY, caFile: null } },
        'refused',
      ],
      [
        'a CA without a TLS identity',
        '0.0.0.0',
        { tls: { identity: null, caFile: '/tls/ca.pem' } },
        'refused',
      ],
      [
        'a TLS identity and a CA: mutual TLS',
        '::',
        { tls: { identity: IDENTITY, caFile: '/tls/ca.pem' } },
        'mutual-tls',
      ],
      ['the insecure switch', '0.0.0.0', { insecure: true }, 'insecure'],
      ['the insecure switch on a LAN address', '10.1.2.3', { insecure: true }, 'insecure'],
      ['the insecure switch beside a token', '0.0.0.0', { insecure: true, token: TOKEN }, 'token'],
      ['the insecure switch on loopback', '127.0.0.1', { insecure: true }, 'loopback'],
    ];
  for (const [label, host, mesh, kind] of cases) {
    const exposure = meshExposure({
      listen: { grpc: { host, port: 50060 } },
      mesh: { ...OPEN, ...mesh },
    });
    t.equal(exposure.kind, kind, label);
  }
});

t.test('a refusal names the variables and what to do', async (t) => {
  const exposure = meshExposure({ listen: { grpc: { host: '::', port: 50060 } }, mesh: OPEN });
  if (exposure.kind !== 'refused') throw new Error(`expected a refusal, got ${exposure.kind}`);
  for (const name of [
    'MEMQL_GRPC_LISTEN=[::]:50060',
    'MEMQL_MESH_TOKEN',
    'MEMQL_TLS_CERT_FILE',
    'MEMQL_TLS_KEY_FILE',
    'MEMQL_TLS_CA_FILE',
    'MEMQL_MESH_INSECURE=1',
    'MEMQL_GRPC_LISTEN=127.0.0.1:50060',
  ]) {
    t.ok(exposure.message.includes(name), `names ${name}`);
  }
});

t.test('a TLS identity without a CA is called out in the refusal', async (t) => {
  const exposure = meshExposure({
    listen: { grpc: { host: '0.0.0.0', port: 50060 } },
    mesh: { ...OPEN, tls: { identity: IDENTITY, caFile: null } },
  });
  t.equal(exposure.kind, 'refused');
  t.match(exposure, { message: /without MEMQL_TLS_CA_FILE the peers are not verified/ });
});

t.test('the insecure switch carries a warning naming the address', async (t) => {
  const exposure = meshExposure({
    listen: { grpc: { host: '0.0.0.0', port: 0 } },
    mesh: { ...OPEN, insecure: true },
  });
  t.match(exposure, { kind: 'insecure', warning: /MEMQL_MESH_INSECURE.*0\.0\.0\.0:0/ });
});
