/**
 * Loading the wire contract. `proto/` is the only definition of what crosses the
 * mesh; it is read at run time with proto-loader, so there is no generated code to
 * drift from it. Compiled code lives under `dist/`, so the proto directory is found
 * by walking up from this module to the package root (the directory holding
 * `package.json`), which works from `src/` and `dist/src/` alike.
 *
 * @module
 */

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServiceDefinition } from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';

/** Full name of the node service, as gRPC routes it. */
export const NODE_SERVICE_NAME = 'memql.node.v1.NodeService';
/** Full name of the standard health service. */
export const HEALTH_SERVICE_NAME = 'grpc.health.v1.Health';
/** Path of the one node RPC. */
export const NODE_STREAM_PATH = `/${NODE_SERVICE_NAME}/Stream`;

/**
 * How messages map to JavaScript. Field names become camelCase (`node_id` is
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
  const definition = loadSync(['memql/node/v1/node.proto', 'grpc/health/v1/health.proto'], {
    ...PROTO_LOADER_OPTIONS,
    includeDirs: [dir],
  });
  const nodeService = definition[NODE_SERVICE_NAME];
  const healthService = definition[HEALTH_SERVICE_NAME];
  if (!isService(nodeService) || !isService(healthService)) {
    throw new Error(
      `proto files under ${dir} do not define ${NODE_SERVICE_NAME} and ${HEALTH_SERVICE_NAME}`,
    );
  }
  cached = { nodeService, healthService };
  return cached;
}

function isService(value: unknown): value is ServiceDefinition {
  return typeof value === 'object' && value !== null && !('format' in value);
}
