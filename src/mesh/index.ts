/**
 * The mesh: the wire contract loaded from `proto/`, the `NodeService.Stream` server
 * and client with typed frames, the one dialler of that stream (`dialNodeStream`: the
 * agent's peer connections and a worker host's link both dial with it), the session
 * that serves a stream from either end (as a worker host does on the stream it dials),
 * `grpc.health.v1`, mesh-token and TLS authentication, the agent's peer registry and
 * the pure peer picker.
 *
 * ```ts
 * const pick = pickPeer(registry.views(), affinityNodeId, { build: false });
 * ```
 *
 * @packageDocumentation
 */

export { AGENT_PEER_CONNECT_MS, AgentPeers, type AgentPeersOptions } from './agent-peers.js';
export { type BackoffOptions, DEFAULT_BACKOFF, nextBackoff } from './backoff.js';
export type {
  DispatchCallOptions,
  DispatchTarget,
  PortTarget,
  RunReleaseAnswer,
  RunReleaseTarget,
} from './dispatch-target.js';
export {
  type CancelFrame,
  type DataFrame,
  type DecodedFrame,
  decodeFrame,
  encodeFrame,
  type Frame,
  type HealthFrame,
  type HelloFrame,
  type NodeType,
  type OutputFrame,
  type RequestFrame,
  type ResponseFrame,
  tolerantDeserializer,
  type WireAuthority,
} from './frames.js';
export { HealthStatusTable, type ServingStatus } from './health-service.js';
export {
  HEALTH_INTERVAL_MS,
  HEALTH_STALE_MS,
  KEEPALIVE_TIME_MS,
  KEEPALIVE_TIMEOUT_MS,
  LOAD_SETTLE_MS,
  MAX_FRAME_BYTES,
  MAX_REQUEST_ID_CHARS,
  OUTPUT_CHUNK_BYTES,
  RESOLVE_INTERVAL_MS,
  serverChannelOptions,
  TUNNEL_WINDOW_BYTES,
} from './limits.js';
export {
  checkMeshToken,
  MESH_TOKEN_METADATA_KEY,
  type MeshAuthResult,
  tokensEqual,
} from './mesh-auth.js';
export { type ReadPem, serverCredentials } from './mesh-credentials.js';
export {
  type DrainOutcome,
  MESH_SERVER_LIFECYCLE,
  MeshServer,
  type MeshServerOptions,
  type MeshServerState,
} from './mesh-server.js';
export {
  type DialledStream,
  type DialOptions,
  type DialTarget,
  dialChannelOptions,
  dialNodeStream,
  endpointKey,
} from './node-dialer.js';
export {
  PEER_LIFECYCLE,
  PeerConnection,
  type PeerConnectionOptions,
  type PeerEndpoint,
  type PeerState,
} from './peer-connection.js';
export { type PeerPick, type PeerView, type PickNeeds, pickPeer } from './peer-picker.js';
export {
  dnsResolver,
  type FleetPeerView,
  PeerRegistry,
  type PeerRegistryOptions,
  type PeerResolver,
} from './peer-registry.js';
export {
  findPackageRoot,
  HEALTH_SERVICE_NAME,
  loadMeshProtos,
  type MeshProtos,
  NODE_SERVICE_NAME,
  NODE_STREAM_PATH,
  PROTO_LOADER_OPTIONS,
  packageVersion,
  protoDir,
} from './proto.js';
export type {
  RequestContext,
  RequestHandler,
  ServedRequest,
  SessionHost,
  SessionStream,
} from './server-session.js';
export { ServerSession } from './server-session.js';
export { settleWithin } from './settle-within.js';
export {
  type PeerRequestOptions,
  PeerUnavailableError,
  StreamCaller,
  type TunnelOpening,
} from './stream-caller.js';
export { authorityFromWire, authorityToWire, type WireAuthorityResult } from './wire-authority.js';
export {
  answerFromError,
  answerFromResult,
  errorFromResponse,
  errorResponse,
  type HandlerAnswer,
  responseFrame,
  resultFromResponse,
  streamRefusal,
  streamStatusOf,
} from './wire-errors.js';
export {
  createWorkbenchHandler,
  WORKBENCH_DISPATCH_METHOD,
  WORKBENCH_PORT_METHOD,
  WORKBENCH_RELEASE_RUN_METHOD,
} from './workbench-service.js';
export {
  type LiveWorker,
  WORKER_STREAM_LIFECYCLE,
  WorkerHub,
  type WorkerHubOptions,
  type WorkerStreamInfo,
  type WorkerStreamState,
} from './worker-hub.js';
export { WORKER_DISPATCH_METHOD, WORKER_FORWARD_METHOD } from './worker-method.js';
