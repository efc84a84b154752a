/**
 * The config part: every `MEMQL_*` variable parsed and validated once, by
 * {@link loadConfig}, into a typed {@link Config}; a bad value fails naming its
 * variable. Nothing else in the project reads the environment.
 *
 * ```ts
 * const config = loadConfig(env); // the process's environment, in a binary's main.ts
 * ```
 *
 * @packageDocumentation
 */

export type {
  Config,
  ConfigWarning,
  DatabaseConfig,
  EgressConfig,
  EgressSecret,
  ExecConfig,
  FetchConfig,
  ListenAddress,
  ListenConfig,
  LogLevel,
  MeshConfig,
  MeshTlsConfig,
  ObjectStoreConfig,
  ProcessConfig,
  QueueConfig,
  RunnerConfig,
  RunnerKind,
  TlsIdentity,
  WorkerConfig,
} from './config.js';
export { LOG_LEVELS } from './config.js';
export type { ConfigIssue } from './config-error.js';
export { ConfigError } from './config-error.js';
export { renderConfigTable } from './config-table.js';
export type { FileReader } from './egress-settings.js';
export type { Env } from './env-reader.js';
export type { HostPort } from './host-port.js';
export { formatHostPort, parseHostPort } from './host-port.js';
export type { LoadConfigOptions } from './load-config.js';
export { loadConfig } from './load-config.js';
export type { MeshExposure } from './mesh-exposure.js';
export { isLoopbackHost, meshExposure } from './mesh-exposure.js';
export type { Parsed } from './parsed.js';
export type { ParsedPeerSeeds, PeerSeed } from './peer-seeds.js';
export { parsePeerSeeds } from './peer-seeds.js';
export { configLogView, REDACTED, redactConfig, redactUrlPassword } from './redact.js';
export type { ConfigVariable, ConfigVariableName } from './variables.js';
export { CONFIG_VARIABLES } from './variables.js';
