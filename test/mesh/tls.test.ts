import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import type { MeshTlsConfig } from '../../src/config/index.js';
import { serverCredentials } from '../../src/mesh/mesh-credentials.js';
import { MeshServer } from '../../src/mesh/mesh-server.js';
import { PeerConnection } from '../../src/mesh/peer-connection.js';
import { eventually } from '../support/mesh.js';

/** Mesh TLS and mutual TLS, with certificates made by openssl for this test. */

const log = pino({ level: 'silent' });
const dir = await mkdtemp(join(tmpdir(), 'memql-tls-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const p = (name: string) => join(dir, name);
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

openssl(
  'req',
  '-x509',
  '-newkey',
  'rsa:2048',
  '-nodes',
  '-days',
  '1',
  '-subj',
  '/CN=memql test CA',
  '-keyout',
  'ca.key',
  '-out',
  'ca.crt',
);
function issue(name: string, cn: string, ext: string) {
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    `/CN=${cn}`,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
  );
  return writeFile(p(`${name}.ext`), ext).then(() =>
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '1',
      '-out',
      `${name}.crt`,
      '-extfile',
      `${name}.ext`,
    ),
  );
}
await issue('server', 'workbench', 'subjectAltName=DNS:workbench\nextendedKeyUsage=serverAuth\n');
await issue('client', 'agent', 'extendedKeyUsage=clientAuth\n');

const serverIdentity = { certFile: p('server.crt'), keyFile: p('server.key') };
const clientIdentity = { certFile: p('client.crt'), keyFile: p('client.key') };

async function serve(tls: MeshTlsConfig) {
  const s = new MeshServer({
    nodeId: 'wb-tls',
    nodeType: 'workbench',
    version: 't',
    token: null,
    tls,
    log,
    handler: async () => ({ ok: true }),
    healthIntervalMs: 100,
  });
  const { port } = await s.start({ host: '127.0.0.1', port: 0 });
  t.teardown(() => s.close());
  return port;
}

function dial(port: number, tls: MeshTlsConfig | null, onChange?: () => void) {
  const c = new PeerConnection({
    endpoint: { host: '127.0.0.1', port, serverName: 'workbench' },
    self: { nodeId: 'agent', nodeType: 'agent', version: 't' },
    token: null,
    tls,
    log,
    backoff: { initialMs: 50, maxMs: 100, multiplier: 2 },
    ...(onChange ? { onChange } : {}),
  });
  c.start();
  t.teardown(() => c.close());
  return c;
}

/**
 * Dials and follows the connection's state moves until `attempts` dials have ended
 * (each one a move to `backoff`); true when none of them said hello (`ready`).
 */
async function neverReady(port: number, tls: MeshTlsConfig | null, attempts = 3) {
  let ended = 0;
  let ready = false;
  let last: string | undefined;
  const c: PeerConnection = dial(port, tls, () => {
    const state = c.currentState;
    if (state === last) return;
    last = state;
    if (state === 'ready') ready = true;
    if (state === 'backoff') ended += 1;
  });
  await eventually(`${attempts} dial attempts ended`, () => ended >= attempts);
  return !ready;
}

t.test('TLS: the client verifies the certificate against the CA and the seed name', async (t) => {
  const port = await serve({ identity: serverIdentity, caFile: null });
  const good = dial(port, { identity: null, caFile: p('ca.crt') });
  await eventually('TLS stream ready', () => good.view().healthy);
  t.equal(good.nodeId, 'wb-tls');
  t.ok(await neverReady(port, { identity: null, caFile: null }), 'an unknown CA is refused');
  t.ok(await neverReady(port, null), 'plaintext to a TLS node fails');
});

t.test('mutual TLS: a client certificate from the CA is required', async (t) => {
  const port = await serve({ identity: serverIdentity, caFile: p('ca.crt') });
  const good = dial(port, { identity: clientIdentity, caFile: p('ca.crt') });
  await eventually('mTLS stream ready', () => good.view().healthy);
  t.ok(
    await neverReady(port, { identity: null, caFile: p('ca.crt') }),
    'no client certificate: refused',
  );
});

t.test('serving TLS needs an identity', async (t) => {
  t.throws(() => serverCredentials({ identity: null, caFile: p('ca.crt') }), /MEMQL_TLS_CERT_FILE/);
});
