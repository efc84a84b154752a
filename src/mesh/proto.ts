/**
 * Loading the wire contract. `proto/` is the only definition of what crosses the
 * mesh; it is read at run time (protobufjs for the node service, proto-loader for the
 * standard health service), so there is no generated code to drift from it. Compiled
 * code lives under `dist/`, so the proto directory is found by walking up from this
 * module to the package root (the directory holding `package.json`), which works from
 * `src/` and `dist/src/` alike.
 *
 * @module
 */

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';
import protobuf from 'protobufjs';

/** Full name of the node service, as gRPC routes it. */
export const NODE_SERVICE_NAME = 'memql.node.v1.NodeService';
/** Full name of the standard health service. */
export const HEALTH_SERVICE_NAME = 'grpc.health.v1.Health';
/** Path of the one node RPC. */
export const NODE_STREAM_PATH = `/${NODE_SERVICE_NAME}/Stream`;

/** The node service's file, under `proto/`. */
const NODE_PROTO = 'memql/node/v1/node.proto';
/** The message both directions of the node stream carry. */
const FRAME_TYPE = 'memql.node.v1.Frame';

/**
 * How proto-loader maps messages to JavaScript (the health service, and tests that
 * hold the node service's codec to it). Field names become camelCase (`node_id` is
 * `nodeId`), `oneofs` adds a virtual field naming the member that is set (`kind`,
 * `chunk`), enums are their names, bytes are Buffers.
 */
export const PROTO_LOADER_OPTIONS: Options = {
  keepCase: false,
  longs: String,
  enums: String,
  bytes: Buffer,
  defaults: true,
  oneofs: true,
};

/** The directory that holds `package.json`, walking up from `fromDir`. */
export function findPackageRoot(fromDir: string): string {
  let dir = fromDir;
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${fromDir}`);
    dir = parent;
  }
}

/** The package's `proto/` directory. */
export function protoDir(): string {
  return join(findPackageRoot(dirname(fileURLToPath(import.meta.url))), 'proto');
}

/** The package's version (from `package.json`), sent in hello frames. */
export function packageVersion(): string {
  const root = findPackageRoot(dirname(fileURLToPath(import.meta.url)));
  const pkg: unknown = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const version = (pkg as { version?: unknown }).version;
  return typeof version === 'string' ? version : '0.0.0';
}

/** The two services every node speaks, as loaded from `proto/`. */
export interface MeshProtos {
  /** `memql.node.v1.NodeService`. */
  readonly nodeService: ServiceDefinition;
  /** `grpc.health.v1.Health`. */
  readonly healthService: ServiceDefinition;
}

let cached: MeshProtos | undefined;

/** Loads (once per process) the node and health services from `proto/`. */
export function loadMeshProtos(): MeshProtos {
  if (cached) return cached;
  const dir = protoDir();
  const definition = loadSync(['grpc/health/v1/health.proto'], {
    ...PROTO_LOADER_OPTIONS,
    includeDirs: [dir],
  });
  const healthService = definition[HEALTH_SERVICE_NAME];
  if (!isService(healthService)) {
    throw new Error(`proto files under ${dir} do not define ${HEALTH_SERVICE_NAME}`);
  }
  cached = { nodeService: nodeServiceOf(dir), healthService };
  return cached;
}

/**
 * `NodeService` with its frames written and read by protobufjs's codec for `Frame`,
 * as generated from `node.proto`: a frame object (`encodeFrame`) is written as it is,
 * and a decoded message is handed on as it is: its oneofs named by their virtual
 * fields (`kind`, `chunk`), absent fields at their proto3 defaults on the prototype,
 * bytes as Buffers. The bytes are those proto-loader makes (`test/mesh/wire.test.ts`);
 * what it adds, a copy into and out of plain objects on each side, was most of the cost
 * of a frame sent or read by a node that had been idle.
 */
function nodeServiceOf(dir: string): ServiceDefinition {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => join(dir, target);
  root.loadSync(NODE_PROTO, { keepCase: false });
  root.resolveAll();
  const frame = root.lookupType(FRAME_TYPE);
  const service = root.lookupService(NODE_SERVICE_NAME);
  if (!service.methods.Stream) {
    throw new Error(`${NODE_PROTO} under ${dir} does not define ${NODE_SERVICE_NAME}.Stream`);
  }
  const serialize = (value: object): Buffer => {
    const bytes = frame.encode(value).finish();
    return Buffer.isBuffer(bytes)
      ? bytes
      : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
  const deserialize = (bytes: Buffer): object => frame.decode(bytes);
  const stream: MethodDefinition<object, object> = {
    path: NODE_STREAM_PATH,
    requestStream: true,
    responseStream: true,
    requestSerialize: serialize,
    requestDeserialize: deserialize,
    responseSerialize: serialize,
    responseDeserialize: deserialize,
    originalName: 'stream',
  };
  return { Stream: stream } as ServiceDefinition;
}

function isService(value: unknown): value is ServiceDefinition {
  return typeof value === 'object' && value !== null && !('format' in value);
}
