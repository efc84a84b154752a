/**
 * The one way a node dials another's `NodeService.Stream`: a channel of its own per
 * attempt with the mesh's options (`clientChannelOptions`), credentials from the TLS
 * settings (plaintext without them), the TLS name to check when it is not the dialled
 * host, and the stream call with the mesh token's metadata. The agent dials its
 * replicas with it (`peer-connection.ts`) and a worker host its agent
 * (`worker/worker-link.ts`); what each does with the stream is its own.
 *
 * @module
 */

import { Client, type ClientDuplexStream } from '@grpc/grpc-js';
import type { MeshTlsConfig } from '../config/index.js';
import { tolerantDeserializer } from './frames.js';
import { clientChannelOptions } from './limits.js';
import { meshTokenMetadata } from './mesh-auth.js';
import { channelCredentials } from './mesh-credentials.js';
import { loadMeshProtos, NODE_STREAM_PATH } from './proto.js';

/** Where a node is dialled. */
export interface DialTarget {
  /** IP address (or host name) to dial. */
  readonly host: string;
  readonly port: number;
  /**
   * The name the node's TLS certificate is checked against when it differs from
   * `host` (a seed's host name, resolved to an address). Default `host`.
   */
  readonly serverName?: string;
}

/** Options of {@link dialNodeStream}. */
export interface DialOptions {
  /** `MEMQL_TLS_*`; `null` dials plaintext. */
  readonly tls: MeshTlsConfig | null;
  /** Sent as `authorization: Bearer <token>`; `null` sends none. */
  readonly token: string | null;
}

/** One dialled stream and the channel it runs on. */
export interface DialledStream {
  /** The channel; closing it ends the stream. */
  readonly client: Client;
  /** `NodeService.Stream`, frames in and out as decoded proto objects. */
  readonly call: ClientDuplexStream<unknown, unknown>;
}

/** Formats `host:port`, bracketing IPv6. */
export function endpointKey(endpoint: { host: string; port: number }): string {
  return endpoint.host.includes(':')
    ? `[${endpoint.host}]:${endpoint.port}`
    : `${endpoint.host}:${endpoint.port}`;
}

/** The channel options of a dial: the mesh's, and the TLS name when it is not the host. */
export function dialChannelOptions(
  target: DialTarget,
  tls: MeshTlsConfig | null,
): Record<string, string | number> {
  const options: Record<string, string | number> = { ...clientChannelOptions() };
  const serverName = target.serverName ?? target.host;
  if (tls !== null && serverName !== target.host) {
    options['grpc.ssl_target_name_override'] = serverName;
    options['grpc.default_authority'] = serverName;
  }
  return options;
}

/** Opens a channel to `target` and starts `NodeService.Stream` on it. */
export function dialNodeStream(target: DialTarget, options: DialOptions): DialledStream {
  const method = loadMeshProtos().nodeService.Stream;
  if (!method) throw new Error('NodeService has no Stream method');
  const client = new Client(
    endpointKey(target),
    channelCredentials(options.tls),
    dialChannelOptions(target, options.tls),
  );
  const call = client.makeBidiStreamRequest(
    NODE_STREAM_PATH,
    method.requestSerialize,
    tolerantDeserializer(method.responseDeserialize),
    meshTokenMetadata(options.token),
  );
  return { client, call };
}
