import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { CA_CERT_FILE, CA_KEY_FILE, loadOrCreateCa } from '../../../src/sandbox/egress/index.js';
import { LeafCertificates } from '../../../src/sandbox/egress/leaf-certs.js';
import { newRsaKey } from '../../../src/sandbox/egress/node-ca.js';
import { buildCertificate } from '../../../src/sandbox/egress/x509-build.js';
import { scratch } from './egress-fixture.js';

// The node CA: made once and kept, its key private to the node, and certificates that
// OpenSSL's strict verification (what Python 3.13 turns on for pip) accepts.

const run = promisify(execFile);

t.test('made once with private key, kept, and loaded back the same', async (t) => {
  const tmp = await scratch('egca-');
  t.teardown(tmp.done);
  const dir = join(tmp.dir, 'ca');
  const first = await loadOrCreateCa(dir);
  t.equal((await stat(join(dir, CA_KEY_FILE))).mode & 0o777, 0o600, 'the key is 0600');
  t.equal((await stat(join(dir, CA_CERT_FILE))).mode & 0o777, 0o644, 'the certificate is 0644');
  t.equal((await stat(dir)).mode & 0o777, 0o700);
  const cert = new X509Certificate(first.certPem);
  t.ok(cert.ca);
  t.match(cert.subject, /CN=memql-workbench egress CA [0-9a-f]{8}/);
  t.ok(cert.checkPrivateKey(first.key));
  const again = await loadOrCreateCa(dir);
  t.equal(again.certPem, first.certPem, 'a restart keeps the CA the sandboxes trust');
  // Near its end, it is replaced.
  const late = await loadOrCreateCa(dir, new Date(first.notAfter.getTime() - 24 * 3600_000));
  t.not(late.certPem, first.certPem);
});

t.test('a CA whose files do not belong together stops the node, naming them', async (t) => {
  const tmp = await scratch('egca-');
  t.teardown(tmp.done);
  const dir = join(tmp.dir, 'ca');
  await loadOrCreateCa(dir);
  const other = await newRsaKey();
  await writeFile(
    join(dir, CA_KEY_FILE),
    other.privateKey.export({ type: 'pkcs8', format: 'pem' }),
  );
  await t.rejects(
    loadOrCreateCa(dir),
    /egress-ca\.pem and .*egress-ca-key\.pem cannot be used.*remove both files/,
  );
  await writeFile(join(dir, CA_KEY_FILE), 'not a key');
  await t.rejects(loadOrCreateCa(dir), /cannot be used/);
});

t.test('OpenSSL verifies the CA and its leaves strictly', async (t) => {
  const tmp = await scratch('egca-');
  t.teardown(tmp.done);
  const ca = await loadOrCreateCa(join(tmp.dir, 'ca'));
  const key = await newRsaKey();
  const leaf = buildCertificate({
    kind: 'leaf',
    commonName: 'pkgs.test',
    issuerCommonName: ca.commonName,
    publicKey: key.publicKey,
    signingKey: ca.key,
    issuerPublicKey: ca.publicKey,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 3600_000),
    dnsNames: ['pkgs.test'],
  });
  const leafPath = join(tmp.dir, 'leaf.pem');
  await writeFile(leafPath, leaf);
  const { stdout } = await run('openssl', [
    'verify',
    '-x509_strict',
    '-purpose',
    'sslserver',
    '-verify_hostname',
    'pkgs.test',
    '-CAfile',
    ca.certPath,
    leafPath,
  ]);
  t.match(stdout, /leaf\.pem: OK/);
  const x = new X509Certificate(leaf);
  t.equal(x.subjectAltName, 'DNS:pkgs.test');
  t.ok(x.verify(ca.publicKey));
  t.equal(x.checkHost('pkgs.test'), 'pkgs.test');
  t.equal(x.checkHost('other.test'), undefined, 'a leaf is for its one host');
  await t.rejects(
    run('openssl', [
      'verify',
      '-x509_strict',
      '-verify_hostname',
      'other.test',
      '-CAfile',
      ca.certPath,
      leafPath,
    ]),
  );
});

t.test('leaves are issued once per host and shared', async (t) => {
  const tmp = await scratch('egca-');
  t.teardown(tmp.done);
  let loads = 0;
  const caDir = join(tmp.dir, 'ca');
  const leaves = new LeafCertificates(() => {
    loads += 1;
    return loadOrCreateCa(caDir);
  });
  const [a, b] = await Promise.all([
    leaves.contextFor('pkgs.test'),
    leaves.contextFor('pkgs.test'),
  ]);
  t.equal(a, b, 'two first connections share one issuance');
  t.equal(await leaves.contextFor('pkgs.test'), a);
  t.not(await leaves.contextFor('other.test'), a);
  t.equal(loads, 2);
});
