/**
 * TLS server contexts for the hosts whose TLS the proxy terminates (a secret's
 * hosts), each with a leaf certificate for exactly that name signed by the node CA.
 * One key serves every leaf of the process (made once, kept in memory only); leaves
 * are cached until near their end, and the cache is bounded because a secret's
 * wildcard rule covers unboundedly many names.
 *
 * @module
 */

import type { KeyObject } from 'node:crypto';
import { createSecureContext, type SecureContext } from 'node:tls';
import { type NodeCa, newRsaKey } from './node-ca.js';
import { buildCertificate } from './x509-build.js';

const LEAF_VALIDITY_MS = 7 * 24 * 3600_000;
/** A leaf this close to its end is reissued. */
const LEAF_RENEW_BEFORE_MS = 24 * 3600_000;
const MAX_CACHED = 1_000;

interface Cached {
  readonly context: SecureContext;
  readonly renewAt: number;
}

/** Issues and caches leaf contexts for one CA. */
export class LeafCertificates {
  private readonly cache = new Map<string, Promise<Cached>>();
  private leafKey: Promise<{ privateKey: KeyObject; publicKey: KeyObject }> | null = null;

  constructor(private readonly ca: () => Promise<NodeCa>) {}

  /** A server context presenting a certificate for `host` (a normalized DNS name). */
  async contextFor(host: string): Promise<SecureContext> {
    const hit = this.cache.get(host);
    if (hit !== undefined) {
      const cached = await hit.catch(() => null);
      if (cached !== null && cached.renewAt > Date.now()) return cached.context;
      this.cache.delete(host);
    }
    const made = this.issue(host);
    if (this.cache.size >= MAX_CACHED) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.set(host, made);
    made.catch(() => this.cache.delete(host));
    return (await made).context;
  }

  private async issue(host: string): Promise<Cached> {
    const ca = await this.ca();
    this.leafKey ??= newRsaKey();
    const key = await this.leafKey;
    const now = Date.now();
    const notAfter = Math.min(now + LEAF_VALIDITY_MS, ca.notAfter.getTime());
    const cert = buildCertificate({
      kind: 'leaf',
      commonName: host,
      issuerCommonName: ca.commonName,
      publicKey: key.publicKey,
      signingKey: ca.key,
      issuerPublicKey: ca.publicKey,
      notBefore: new Date(now - 3600_000), // a sandbox clock a little behind still accepts it
      notAfter: new Date(notAfter),
      dnsNames: [host],
    });
    const context = createSecureContext({
      key: key.privateKey.export({ type: 'pkcs8', format: 'pem' }),
      // The chain: leaf, then the CA, as servers send it.
      cert: `${cert}${ca.certPem}`,
    });
    return { context, renewAt: notAfter - LEAF_RENEW_BEFORE_MS };
  }
}
