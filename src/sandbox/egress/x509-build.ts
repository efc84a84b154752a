/**
 * X.509 certificates for the node CA and the leaves it signs for the hosts whose TLS
 * the proxy terminates. `node-forge` only encodes the certificate (the DER of its
 * fields); the signature is made by `node:crypto` with the CA's key, so the key never
 * leaves a `KeyObject`. RSA with SHA-256 throughout.
 *
 * The extensions are the ones strict verifiers demand (OpenSSL's X509_STRICT, which
 * Python 3.13 turns on for pip and requests): a CA with critical basicConstraints and
 * keyUsage and a subject key id; a leaf with a subjectAltName, serverAuth, and the
 * CA's key id as its authority key id.
 *
 * @module
 */

import { createHash, type KeyObject, randomBytes, sign } from 'node:crypto';
import forge from 'node-forge';

/** What to put in a certificate. */
export interface CertificateSpec {
  /** The subject's common name. */
  readonly commonName: string;
  /** The issuer's common name (the subject's own, for the self-signed CA). */
  readonly issuerCommonName: string;
  /** The certified key (RSA). */
  readonly publicKey: KeyObject;
  /** The issuer's private key (RSA). */
  readonly signingKey: KeyObject;
  /** The issuer's public key, for the authority key id. */
  readonly issuerPublicKey: KeyObject;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** A CA certificate (signs leaves) or a TLS server leaf for `dnsNames`. */
  readonly kind: 'ca' | 'leaf';
  /** The names a leaf is for. */
  readonly dnsNames?: readonly string[];
}

const ORGANIZATION = 'memql-workbench';

/** Forge's TBSCertificate encoder; exported by the library, missing from its types. */
const pkiInternals = forge.pki as unknown as {
  getTBSCertificate(cert: forge.pki.Certificate): forge.asn1.Asn1;
};

/** The key id of an RSA public key: SHA-1 of its RSAPublicKey (RFC 5280 4.2.1.2, method 1). */
export function keyIdentifier(key: KeyObject): string {
  const der = key.export({ type: 'pkcs1', format: 'der' });
  return createHash('sha1').update(der).digest('binary');
}

/** Builds and signs a certificate; returns its PEM. */
export function buildCertificate(spec: CertificateSpec): string {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(
    spec.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  );
  // A positive serial of 127 random bits: unique without a counter to keep.
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f;
  cert.serialNumber = serial.toString('hex');
  cert.validity.notBefore = spec.notBefore;
  cert.validity.notAfter = spec.notAfter;
  cert.setSubject([
    { name: 'organizationName', value: ORGANIZATION },
    { name: 'commonName', value: spec.commonName },
  ]);
  cert.setIssuer([
    { name: 'organizationName', value: ORGANIZATION },
    { name: 'commonName', value: spec.issuerCommonName },
  ]);
  cert.setExtensions(spec.kind === 'ca' ? caExtensions() : leafExtensions(spec));
  const oid = forge.pki.oids.sha256WithRSAEncryption!;
  cert.siginfo.algorithmOid = oid;
  (cert as { signatureOid: string | null }).signatureOid = oid;
  const tbs = pkiInternals.getTBSCertificate(cert);
  (cert as { tbsCertificate: forge.asn1.Asn1 }).tbsCertificate = tbs;
  const der = Buffer.from(forge.asn1.toDer(tbs).getBytes(), 'binary');
  cert.signature = sign('sha256', der, spec.signingKey).toString('binary');
  return forge.pki.certificateToPem(cert);
}

// Fresh objects each time: forge writes its encoding into the extension objects.
function caExtensions(): object[] {
  return [
    { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    // Forge computes it from the certificate's key, as keyIdentifier() does.
    { name: 'subjectKeyIdentifier' },
  ];
}

function leafExtensions(spec: CertificateSpec): object[] {
  return [
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: (spec.dnsNames ?? []).map((value) => ({ type: 2, value })),
    },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: keyIdentifier(spec.issuerPublicKey) },
  ];
}
