/**
 * memql-workbench as a ComputeSDK provider (`memql-workbench/computesdk`): a sandbox is
 * a run of an agent node, its commands run through `exec` under the node's allowlist,
 * its files are the run's workspace (`/workspace`, or paths relative to it). Kept out
 * of the client's own door, so the CLI and the MCP server never load ComputeSDK.
 *
 * ```ts
 * import { compute } from 'computesdk';
 * import { memqlWorkbench } from 'memql-workbench/computesdk';
 *
 * const sdk = compute({ provider: memqlWorkbench({ baseUrl: 'http://127.0.0.1:8080', token }) });
 * const sandbox = await sdk.sandbox.create();
 * const { stdout, exitCode } = await sandbox.runCommand('node -v');
 * await sandbox.filesystem.writeFile('/workspace/notes.txt', 'hello');
 * await sandbox.destroy();
 * ```
 *
 * Refusals are thrown as the client's `ClientError`, its `code` the stable error code
 * (`command_not_allowed`, `invalid_path`, ...). docs/computesdk.md says what each method
 * maps to and what the provider leaves out.
 *
 * @packageDocumentation
 */

export { ClientError } from '../client-error.js';
export {
  commandArgs,
  commandResult,
  exitCodeOf,
  NO_EXIT_CODE,
  TIMEOUT_EXIT_CODE,
} from './command-result.js';
export { memqlWorkbench, PROVIDER_NAME } from './provider.js';
export type { MemqlWorkbenchConfig, WorkbenchSandbox } from './sandbox-calls.js';
export { commandLine, shellQuote, WORKSPACE_MOUNT, workspacePath } from './workspace-paths.js';
