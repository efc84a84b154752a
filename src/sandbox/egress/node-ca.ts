/**
 * The node's egress CA: made once under `caDir` and kept, so a sandbox's trust bundle
 * stays valid across node restarts. The certificate (`egress-ca.pem`, mode 0644) goes
 * into every sandbox's CA bundle; the key (`egress-ca-key.pem`, mode 0600) never leaves
 * the host process. It signs leaves only for the hosts of secrets a run opted into
 * (`leaf-certs.ts`). One node process owns a `caDir`.
 *
 * @module
 */

import {
  createPrivateKey,
  createPublicKey,
  generateKeyPair,
  type KeyObject,
  randomBytes,
  X509Certificate,
} from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildCertificate } from './x509-build.js';

const generateRsa = promisify(generateKeyPair);

/** File names under `caDir`. */
export const CA_CERT_FILE = 'egress-ca.pem';
export const CA_KEY_FILE = 'egress-ca-key.pem';

/** How long a new CA is valid. */
const CA_VALIDITY_MS = 10 * 365 * 24 * 3600_000;
/** A CA this close to its end is replaced, so no leaf outlives it. */
const CA_RENEW_BEFORE_MS = 30 * 24 * 3600_000;

/** The node CA, loaded. */
export interface NodeCa {
  /** Path of the certificate's PEM. */
  readonly certPath: string;
  readonly certPem: string;
  /** Its common name, the issuer of every leaf. */
  readonly commonName: string;
  readonly key: KeyObject;
  readonly publicKey: KeyObject;
  /** When the CA stops being valid. */
  readonly notAfter: Date;
}

/** An RSA 2048 key pair, made by OpenSSL off the main thread. */
export async function newRsaKey(): Promise<{ privateKey: KeyObject; publicKey: KeyObject }> {
  return generateRsa('rsa', { modulusLength: 2048 });
}

/**
 * Loads the CA under `caDir`, or makes one when there is none (or the one there is
 * about to expire). A CA whose files are present but unreadable or do not belong
 * together stops the node, naming the files: replacing it silently would hide
 * tampering, and the operator can remove both files to have a new one made.
 */
export async function loadOrCreateCa(caDir: string, now = new Date()): Promise<NodeCa> {
  await mkdir(caDir, { recursive: true, mode: 0o700 });
  const certPath = join(caDir, CA_CERT_FILE);
  const keyPath = join(caDir, CA_KEY_FILE);
  const [certPem, keyPem] = await Promise.all([readIfThere(certPath), readIfThere(keyPath)]);
  if (certPem !== null && keyPem !== null) {
    const loaded = parseCa(certPath, certPem, keyPath, keyPem);
    if (loaded.notAfter.getTime() - now.getTime() > CA_RENEW_BEFORE_MS) return loaded;
  }
  return createCa(caDir, certPath, keyPath, now);
}

function parseCa(certPath: string, certPem: string, keyPath: string, keyPem: string): NodeCa {
  try {
    const cert = new X509Certificate(certPem);
    const key = createPrivateKey(keyPem);
    if (!cert.ca || !cert.checkPrivateKey(key))
      throw new Error('the key is not the CA certificate’s');
    return {
      certPath,
      certPem,
      commonName: /CN=([^\n]+)/.exec(cert.subject)?.[1] ?? '',
      key,
      publicKey: createPublicKey(key),
      notAfter: new Date(cert.validTo),
    };
  } catch (err) {
    throw new Error(
      `the egress CA in ${certPath} and ${keyPath} cannot be used (${(err as Error).message}); remove both files to have the node make a new CA`,
    );
  }
}

async function createCa(
  caDir: string,
  certPath: string,
  keyPath: string,
  now: Date,
): Promise<NodeCa> {
  const { privateKey, publicKey } = await newRsaKey();
  // A suffix tells this node's CA from another's in a trust store listing.
  const commonName = `memql-workbench egress CA ${randomBytes(4).toString('hex')}`;
  const certPem = buildCertificate({
    kind: 'ca',
    commonName,
    issuerCommonName: commonName,
    publicKey,
    signingKey: privateKey,
    issuerPublicKey: publicKey,
    notBefore: new Date(now.getTime() - 3600_000),
    notAfter: new Date(now.getTime() + CA_VALIDITY_MS),
  });
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  // Key first, certificate last: a certificate on disk always has its key beside it.
  await writeAtomically(caDir, keyPath, keyPem, 0o600);
  await writeAtomically(caDir, certPath, certPem, 0o644);
  return parseCa(certPath, certPem, keyPath, keyPem);
}

async function writeAtomically(
  dir: string,
  path: string,
  text: string,
  mode: number,
): Promise<void> {
  const tmp = join(dir, `.tmp-${randomBytes(6).toString('hex')}`);
  try {
    await writeFile(tmp, text, { mode, flag: 'wx' });
    await chmod(tmp, mode); // the umask may have narrowed or not; the mode is exact
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

async function readIfThere(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
