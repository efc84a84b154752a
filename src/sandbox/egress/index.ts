/**
 * The egress proxy: how a sandboxed command reaches the network, and the only way.
 * The sandbox has no network interface but loopback; each run gets a Unix socket
 * (bound into its sandbox, where a small bridge and `HTTP_PROXY`/`HTTPS_PROXY` point
 * programs at it) served by an HTTP proxy in the node process:
 *
 * - `CONNECT host:port` and absolute-URI requests (`GET http://host/path`) only.
 * - The decision is on the host NAME: the run's policy (read at each new connection)
 *   must allow it on the port; an IP address is never a target. The name is resolved
 *   once, every address must pass the address policy `fetch` uses (no loopback,
 *   private, link-local or metadata addresses unless the operator allowed the range;
 *   metadata never), and only those checked addresses are dialled.
 * - A tunnel's TLS ClientHello must name the CONNECT host (or none); a plain request's
 *   Host header must name its URL's host.
 * - For a host covered by a secret the run opted into, the proxy terminates TLS with a
 *   leaf of the node CA and adds the secret's header upstream; no other host's TLS is
 *   touched, and the secret never enters the sandbox.
 * - A refusal answers 403 (502 when the host could not be reached) with a body naming
 *   the host, the reason and what to do, and `x-memql-egress: refused; reason=<word>`.
 *   Every connection is reported through `onConnection` when it ends.
 *
 * ```ts
 * const proxy = new EgressProxy({ dir, caDir, resolve: systemResolve, allowPrivate: [],
 *   secrets: [], log, onConnection: (c) => audit(c) });
 * const endpoint = await proxy.openRun(runId, () => policyOf(runId));
 * const mark = endpoint.mark();
 * // ... run a command with endpoint.socketPath bound at /run/memql/egress.sock ...
 * const refused = endpoint.refusedSince(mark); // for the exec result's egress.refused
 * await endpoint.close();
 * ```
 *
 * @module
 */

export { EgressProxy, socketName } from './egress-proxy.js';
export type {
  EgressConnection,
  EgressEndpoint,
  EgressProxyOptions,
  EgressSecret,
  RefusedHost,
} from './egress-types.js';
export { CA_CERT_FILE, CA_KEY_FILE, loadOrCreateCa, type NodeCa } from './node-ca.js';
export type { RefusalReason } from './refusal.js';
export { type ClientHelloPeek, peekClientHello } from './sni.js';
export { systemResolve } from './system-resolver.js';
