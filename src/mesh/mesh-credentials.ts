/**
 * Transport security of the mesh, from `Config.mesh.tls`.
 *
 * - No TLS settings: plaintext gRPC (the token, if any, then travels in the clear;
 *   use it on a trusted network only).
 * - A certificate and key: the serving node speaks TLS; dialling nodes verify it
 *   against `MEMQL_TLS_CA_FILE` (or the system roots) and the seed's host name.
 * - A certificate, key and CA file on the serving node: mutual TLS. Clients must
 *   present a certificate chaining to that CA; a dialling node presents its own
 *   certificate when it has one.
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import { ChannelCredentials, ServerCredentials } from '@grpc/grpc-js';
import type { MeshTlsConfig } from '../config/index.js';

/** Reads a PEM file; injected by tests. */
export type ReadPem = (path: string) => Buffer;

const readPem: ReadPem = (path) => readFileSync(path);

/** Server credentials for a serving node. Throws when TLS is set without an identity. */
export function serverCredentials(
  tls: MeshTlsConfig | null,
  read: ReadPem = readPem,
): ServerCredentials {
  if (tls === null) return ServerCredentials.createInsecure();
  if (tls.identity === null) {
    throw new Error(
      'mesh TLS is configured without an identity: set MEMQL_TLS_CERT_FILE and MEMQL_TLS_KEY_FILE to serve TLS',
    );
  }
  const keyCert = [
    { cert_chain: read(tls.identity.certFile), private_key: read(tls.identity.keyFile) },
  ];
  const ca = tls.caFile === null ? null : read(tls.caFile);
  return ServerCredentials.createSsl(ca, keyCert, ca !== null);
}

/** Channel credentials for a dialling node. */
export function channelCredentials(
  tls: MeshTlsConfig | null,
  read: ReadPem = readPem,
): ChannelCredentials {
  if (tls === null) return ChannelCredentials.createInsecure();
  return ChannelCredentials.createSsl(
    tls.caFile === null ? null : read(tls.caFile),
    tls.identity === null ? null : read(tls.identity.keyFile),
    tls.identity === null ? null : read(tls.identity.certFile),
  );
}
