/**
 * The ComputeSDK provider of memql-workbench, made with `@computesdk/provider`'s
 * `defineProvider`: a sandbox is a run, reached over the agent node's HTTP API with
 * {@link WorkbenchClient}.
 *
 * | ComputeSDK | workbench |
 * |---|---|
 * | `sandbox.create()` | `createRun`; the run id is the sandbox id |
 * | `sandbox.getById(id)` | `getRun`; null for a missing run (or an id no run can have) |
 * | `sandbox.list()` | `listRuns({ status: 'running' })`, every page |
 * | `sandbox.destroy(id)`, `sandbox.destroy()` | `endRun` (`endStatus`), then `deleteRun`; a missing run is no error |
 * | `runCommand(cmd, { cwd, env, timeout })` | `exec` (`background: true`: `process_start`) |
 * | `runCommand` with `onStdout`/`onStderr` | `exec` on the streaming route, output as it comes |
 * | `getInfo()` | `getRun`: `running` while the run runs, else `stopped` |
 * | `getUrl({ port })` | the port route, `/v1/runs/:runId/ports/:port/` (the bearer token is the caller's to send) |
 * | `filesystem.*` | the file actions (`sandbox-files.ts`) |
 *
 * @module
 */

import {
  type CommandResult,
  defineProvider,
  type RunCommandOptions,
  type SandboxInfo,
} from '@computesdk/provider';
import { type ExecPayload, isRunId, type ProcessStartPayload } from '../../contract/index.js';
import { ClientError } from '../client-error.js';
import type { Run } from '../types.js';
import { commandArgs, commandResult } from './command-result.js';
import {
  call,
  callStreamed,
  clientFor,
  type MemqlWorkbenchConfig,
  sandboxOf,
  type WorkbenchSandbox,
} from './sandbox-calls.js';
import { exists, mkdir, readdir, readFile, remove, writeFile } from './sandbox-files.js';

/** The provider's name, as ComputeSDK reports it (`sandbox.provider`). */
export const PROVIDER_NAME = 'memql-workbench';

/** Runs per page when listing: the API's largest page. */
const LIST_PAGE = 500;

/** Whether `err` is a refusal with one of `codes`. */
function isCode(err: unknown, ...codes: string[]): boolean {
  return err instanceof ClientError && codes.includes(err.code);
}

/** `getRun`, with a run that is not there (or an id no run can have) as null. */
async function readRun(config: MemqlWorkbenchConfig, runId: string): Promise<Run | null> {
  if (!isRunId(runId)) return null;
  try {
    return await clientFor(config).getRun(runId);
  } catch (err) {
    if (isCode(err, 'not_found')) return null;
    throw err;
  }
}

/** Every running run of the token's user, newest first. */
async function runningRuns(config: MemqlWorkbenchConfig): Promise<Run[]> {
  const client = clientFor(config);
  const runs: Run[] = [];
  let before: string | undefined;
  do {
    const page = await client.listRuns({
      status: 'running',
      limit: LIST_PAGE,
      ...(before === undefined ? {} : { before }),
    });
    runs.push(...page.runs);
    before = page.nextBefore ?? undefined;
  } while (before !== undefined);
  return runs;
}

/**
 * Ends the run (its workspace released) and deletes it with everything it left. A run
 * already ended is deleted as it is; a missing one is no error, so a repeat is harmless.
 */
async function destroyRun(config: MemqlWorkbenchConfig, runId: string): Promise<void> {
  if (!isRunId(runId)) return;
  const client = clientFor(config);
  try {
    await client.endRun(runId, config.endStatus ?? 'succeeded');
  } catch (err) {
    if (isCode(err, 'not_found')) return;
    if (!isCode(err, 'run_ended')) throw err;
  }
  try {
    await client.deleteRun(runId);
  } catch (err) {
    if (!isCode(err, 'not_found')) throw err;
  }
}

/**
 * `exec` of the command, or `process_start` when `background` is set: that answers at
 * once, exit code 0, and the process goes on (read it with the client's `processes`).
 */
async function runCommand(
  sandbox: WorkbenchSandbox,
  command: string,
  options: RunCommandOptions = {},
): Promise<CommandResult> {
  const started = performance.now();
  const args = commandArgs(command, options);
  if (options.background) {
    const { timeoutMs: _ignored, ...startArgs } = args;
    await call<ProcessStartPayload>(sandbox, 'process_start', startArgs);
    return { stdout: '', stderr: '', exitCode: 0, durationMs: performance.now() - started };
  }
  const ran = await call<ExecPayload>(sandbox, 'exec', args);
  return commandResult(ran, performance.now() - started);
}

/** `exec` on the streaming route: `onStdout`/`onStderr` see the output as it is made. */
async function streamCommand(
  sandbox: WorkbenchSandbox,
  command: string,
  options: RunCommandOptions,
): Promise<CommandResult> {
  const started = performance.now();
  // One decoder a stream: a character split between two chunks comes out whole.
  const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  const ran = await callStreamed<ExecPayload>(sandbox, 'exec', commandArgs(command, options), {
    onOutput: (stream, chunk) => {
      const text = decoders[stream].decode(chunk, { stream: true });
      if (text === '') return;
      if (stream === 'stdout') options.onStdout?.(text);
      else options.onStderr?.(text);
    },
  });
  for (const stream of ['stdout', 'stderr'] as const) {
    const rest = decoders[stream].decode();
    if (rest === '') continue;
    if (stream === 'stdout') options.onStdout?.(rest);
    else options.onStderr?.(rest);
  }
  return commandResult(ran, performance.now() - started);
}

/** The run as ComputeSDK's sandbox info, read now. */
async function getInfo(sandbox: WorkbenchSandbox): Promise<SandboxInfo> {
  const run = await sandbox.client.getRun(sandbox.run.id);
  const created = new Date(run.createdAt);
  const expires = run.retentionExpiresAt === null ? null : new Date(run.retentionExpiresAt);
  return {
    id: run.id,
    provider: PROVIDER_NAME,
    status: run.status === 'running' ? 'running' : 'stopped',
    createdAt: created,
    // A run has no execution deadline; its data's retention is the nearest thing.
    timeout: expires === null ? 0 : expires.getTime() - created.getTime(),
    metadata: { run },
  };
}

/** The port route of `port` in the run's sandbox; the caller sends its bearer token. */
async function getUrl(
  sandbox: WorkbenchSandbox,
  options: { port: number; protocol?: string },
): Promise<string> {
  // Appended, not resolved: a node behind a proxy's path prefix keeps it.
  const base = sandbox.client.baseUrl.replace(/\/+$/, '');
  const url = new URL(
    `${base}/v1/runs/${encodeURIComponent(sandbox.run.id)}/ports/${options.port}/`,
  );
  if (options.protocol === 'ws' || options.protocol === 'wss') {
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  }
  return url.toString();
}

/**
 * The provider factory: `memqlWorkbench({ baseUrl, token })` is a ComputeSDK provider,
 * for `compute({ provider })` or on its own (`provider.sandbox.create()`).
 */
export const memqlWorkbench = defineProvider<WorkbenchSandbox, MemqlWorkbenchConfig>({
  name: PROVIDER_NAME,
  methods: {
    sandbox: {
      create: async (config) => {
        const run = await clientFor(config).createRun();
        return { sandbox: sandboxOf(config, run), sandboxId: run.id };
      },
      getById: async (config, sandboxId) => {
        const run = await readRun(config, sandboxId);
        return run === null ? null : { sandbox: sandboxOf(config, run), sandboxId: run.id };
      },
      list: async (config) =>
        (await runningRuns(config)).map((run) => ({
          sandbox: sandboxOf(config, run),
          sandboxId: run.id,
        })),
      destroy: destroyRun,
      runCommand,
      streamCommand,
      getInfo,
      getUrl,
      filesystem: {
        readFile: (sandbox, path) => readFile(sandbox, path),
        writeFile: (sandbox, path, content) => writeFile(sandbox, path, content),
        mkdir: (sandbox, path) => mkdir(sandbox, path),
        readdir: (sandbox, path) => readdir(sandbox, path),
        exists: (sandbox, path) => exists(sandbox, path),
        remove: (sandbox, path) => remove(sandbox, path),
      },
    },
  },
});
