/**
 * The mesh: the wire contract loaded from `proto/`, the `NodeService.Stream` server
 * and client with typed frames (and the session that serves a stream from either
 * end, as a worker host does on the stream it dials), `grpc.health.v1`, mesh-token and TLS
 * authentication, the agent's peer registry and the pure peer picker.
 *
 * @packageDocumentation
 */

export * from './backoff.js';
export type * from './dispatch-target.js';
export * from './frames.js';
export * from './health-service.js';
export * from './limits.js';
export * from './mesh-auth.js';
export * from './mesh-credentials.js';
export * from './mesh-server.js';
export * from './peer-connection.js';
export * from './peer-picker.js';
export * from './peer-registry.js';
export * from './proto.js';
export type * from './server-session.js';
export { responseFrame, ServerSession } from './server-session.js';
export * from './settle-within.js';
export * from './stream-caller.js';
export * from './wire-authority.js';
export * from './workbench-service.js';
export * from './worker-hub.js';
export * from './worker-method.js';
