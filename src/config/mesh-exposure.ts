import { classifyAddress, type IpAddress, parseIPv4Strict, parseIPv6 } from '../contract/index.js';
import type { ListenAddress, MeshConfig } from './config.js';
import { formatHostPort } from './host-port.js';

/**
 * How a node that serves `NodeService.Stream` on `MEMQL_GRPC_LISTEN` is exposed, as
 * decided by {@link meshExposure}. Whoever opens a stream can run commands on the
 * node, so an address other hosts can reach must be authenticated:
 * - `token`: peers present `MEMQL_MESH_TOKEN`.
 * - `mutual-tls`: peers present a certificate chaining to `MEMQL_TLS_CA_FILE`, and the
 *   node has an identity to serve TLS with.
 * - `loopback`: unauthenticated, but only this machine can connect.
 * - `insecure`: reachable and unauthenticated because `MEMQL_MESH_INSECURE` says so;
 *   `warning` is to be logged at every start.
 * - `refused`: reachable and unauthenticated with no switch: the node must not start;
 *   `message` names the variables and says what to do.
 */
export type MeshExposure =
  | { readonly kind: 'token' | 'mutual-tls' | 'loopback' }
  | { readonly kind: 'insecure'; readonly warning: string }
  | { readonly kind: 'refused'; readonly message: string };

/**
 * True when only this machine can connect to `host`: an address in 127.0.0.0/8, `::1`
 * (or its IPv4-mapped form), or the name `localhost`. Any other name may resolve
 * anywhere, and `0.0.0.0` and `::` are every interface. What counts as loopback is
 * the contract's one address table (`classifyAddress`). Pure.
 */
export function isLoopbackHost(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  const address = listenHostAddress(host);
  if (address === null) return false;
  // Of the IPv6 forms that carry an IPv4 address, only the IPv4-mapped one is the
  // IPv4 socket itself; a NAT64, 6to4 or IPv4-compatible address of 127.0.0.1 is
  // an IPv6 address other hosts may route to.
  const { category, via } = classifyAddress(address);
  return category === 'loopback' && (via === undefined || via === 'ipv4-mapped');
}

/**
 * A listen host as an address, in the plain forms a socket binds to: dotted decimal
 * IPv4, or IPv6 text with any `%zone` ignored (the zone picks an interface, not
 * another address). Null for a name or anything else.
 */
function listenHostAddress(host: string): IpAddress | null {
  if (!host.includes(':')) {
    const bytes = parseIPv4Strict(host);
    return bytes === null ? null : { family: 4, bytes };
  }
  const percent = host.indexOf('%');
  const bytes = parseIPv6(percent < 0 ? host : host.slice(0, percent));
  return bytes === null ? null : { family: 6, bytes };
}

/**
 * Decides whether a node may serve the mesh on `listen.grpc` with `mesh`'s
 * authentication. Only nodes that serve `NodeService.Stream` (the workbench) apply
 * it: a server of `grpc.health.v1` alone carries nothing a token guards. Pure.
 */
export function meshExposure(config: {
  readonly listen: { readonly grpc: ListenAddress };
  readonly mesh: MeshConfig;
}): MeshExposure {
  const { mesh } = config;
  const address = formatHostPort(config.listen.grpc);
  if (mesh.token !== null) return { kind: 'token' };
  if (mesh.tls?.identity && mesh.tls.caFile !== null) return { kind: 'mutual-tls' };
  if (isLoopbackHost(config.listen.grpc.host)) return { kind: 'loopback' };
  if (mesh.insecure) {
    return {
      kind: 'insecure',
      warning: `MEMQL_MESH_INSECURE is set: serving the mesh on MEMQL_GRPC_LISTEN=${address}, which is not loopback, with no MEMQL_MESH_TOKEN and no mutual TLS. Anyone who can reach this port can run commands on this node; set MEMQL_MESH_TOKEN unless every host on this network is trusted`,
    };
  }
  const tlsNote = mesh.tls?.identity
    ? ' (MEMQL_TLS_CERT_FILE and MEMQL_TLS_KEY_FILE are set, but without MEMQL_TLS_CA_FILE the peers are not verified)'
    : '';
  return {
    kind: 'refused',
    message: [
      `refusing to start: MEMQL_GRPC_LISTEN=${address} is not a loopback address and the mesh is not authenticated${tlsNote}, so anyone who can reach this port could run commands on this node. Do one of:`,
      '  - set MEMQL_MESH_TOKEN to a shared secret (at least 16 characters, no whitespace), the same on every node of the mesh;',
      "  - configure mutual TLS: MEMQL_TLS_CERT_FILE and MEMQL_TLS_KEY_FILE (this node's certificate and key) and MEMQL_TLS_CA_FILE (the CA that peers' certificates must chain to);",
      '  - listen on loopback only, e.g. MEMQL_GRPC_LISTEN=127.0.0.1:50060;',
      '  - or set MEMQL_MESH_INSECURE=1 to serve it unauthenticated anyway, only on a network where every host is trusted.',
    ].join('\n'),
  };
}
