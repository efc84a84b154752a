/**
 * The shapes the egress proxy shares with the rest of the node: the operator's
 * secrets, the per-connection report, the proxy's options and a run's endpoint.
 *
 * @module
 */

import type { CidrRange, EgressPolicy, HostRule } from '../../contract/index.js';
import type { Logger } from '../../telemetry/index.js';

/**
 * An operator-defined secret, added by the proxy as a request header to the hosts it
 * names, for runs that opt into it by `name`. The value never enters a sandbox, a log
 * line or a report.
 */
export interface EgressSecret {
  /** What a run's policy names to opt in (`policy.secrets`). */
  readonly name: string;
  /** The hosts (and ports) whose requests carry it; TLS to these is terminated by the proxy. */
  readonly hosts: readonly HostRule[];
  /** The header it is sent as, e.g. `authorization`. Replaces one the client sent. */
  readonly header: string;
  /** The header's value. Secret. */
  readonly value: string;
}

/**
 * One connection through the proxy, reported once it ends, for audit and telemetry.
 * A CONNECT tunnel is one connection; a plain HTTP request through the proxy is one
 * too (each is decided on its own, even on a kept-alive proxy connection). Never a
 * path, query, header or body.
 */
export interface EgressConnection {
  readonly runId: string;
  /** The host asked for (normalized when it was a name; printable text otherwise). */
  readonly host: string;
  readonly port: number;
  /** False when the proxy refused it or could not reach the host (`reason` says which). */
  readonly allowed: boolean;
  /** Why it was refused: a {@link RefusalReason} word. */
  readonly reason?: string;
  /** The address dialled (allowed), or the one that was refused (`address_blocked`). */
  readonly address?: string;
  /** Bytes sent to the destination. */
  readonly bytesUp: number;
  /** Bytes received from the destination. */
  readonly bytesDown: number;
  /** From the request's arrival to the connection's end. */
  readonly durationMs: number;
  /** The NAME of the secret the proxy added (names joined by `,` if several). */
  readonly secret?: string;
}

/** Options of {@link EgressProxy}. */
export interface EgressProxyOptions {
  /** Where run sockets live: outside every workspace, short enough for a socket path. */
  readonly dir: string;
  /** Resolves a name to all of its addresses (text). Tests pass a map. */
  resolve(host: string): Promise<string[]>;
  /** Ranges the operator allowed despite the address policy (`MEMQL_FETCH_ALLOW_PRIVATE`). */
  readonly allowPrivate: readonly CidrRange[];
  /** The operator's secrets; a run's policy opts into them by name. */
  readonly secrets: readonly EgressSecret[];
  /** Where the node's CA lives (made on first use, kept; the key is mode 0600). */
  readonly caDir: string;
  /**
   * Extra CA certificates (PEM) trusted upstream, beside the bundled roots, for hosts
   * the proxy terminates TLS for. Tests pass their loopback server's CA.
   */
  readonly upstreamCa?: readonly string[];
  /** Told of every connection once it ends. Must not throw. */
  onConnection?(c: EgressConnection): void;
  readonly log: Logger;
  /** How long a CONNECT tunnel waits for the client's ClientHello. Default 30 s. */
  readonly helloTimeoutMs?: number;
  /** Most simultaneous connections on one run's socket. Default 256. */
  readonly maxConnectionsPerRun?: number;
}

/** One refused destination in a run's refusal log. */
export interface RefusedHost {
  readonly host: string;
  readonly port: number;
  /** The {@link RefusalReason} word. */
  readonly reason: string;
}

/** One run's proxy endpoint. */
export interface EgressEndpoint {
  /** The Unix socket to bind into the sandbox. */
  readonly socketPath: string;
  /** PEM of the node CA, for the sandbox's trust bundle. */
  readonly caCertPath: string;
  /** A point in the refusal log, to list what was refused after it. */
  mark(): number;
  /** The destinations refused since `mark`, each host, port and reason once, oldest first. */
  refusedSince(mark: number): RefusedHost[];
  /** Stops serving the run (when every opener has closed it) and ends its connections. */
  close(): Promise<void>;
}

/** What the endpoint needs from a run: its id and its policy, read per connection. */
export type PolicySource = () => EgressPolicy;
