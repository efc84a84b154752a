/**
 * The TypeScript client of the agent node's HTTP API, for tool loops in Node.js, the
 * `memql` CLI and tests. The `workbenchHost` tool definition for LLM function calling
 * is re-exported here, so a tool loop needs only this module.
 *
 * @packageDocumentation
 */

export {
  type DispatchFailure,
  type DispatchResult,
  type EnvironmentHint,
  GOOS_VALUES,
  MAX_FILE_WRITE_BYTES,
  MAX_UPLOAD_BYTES,
  NEEDS,
  PROCESS_SIGNALS,
  type ProcessOutputPayload,
  type ProcessSignal,
  type ProcessStartPayload,
  type ProcessState,
  type ProcessView,
  type ToolDefinition,
  type VersionDiffPayload,
  type VersionListPayload,
  type VersionRestorePayload,
  type VersionView,
  WORKBENCH_TOOL_NAME,
  workbenchToolDefinition,
} from '../contract/index.js';
export * from './artifact-download.js';
export * from './client-error.js';
export * from './client-options.js';
export * from './id-checks.js';
export * from './ndjson-stream.js';
export * from './process-client.js';
export * from './types.js';
export * from './version-client.js';
export * from './workbench-client.js';
