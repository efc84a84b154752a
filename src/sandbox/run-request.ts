/**
 * One command of a call, run: the call's `ExecRequest` becomes the runner's `RunSpec`,
 * in its workspace directory, under the node's limits. The workbench runs its queued
 * commands through it; a worker host runs its calls' commands through it too, in its
 * user's root, with the process runner and no allowlist.
 *
 * @module
 */

import type { ExecRequest, OutputSink } from '../contract/index.js';
import { WorkbenchError } from '../contract/index.js';
import { resolveWorkspacePath } from '../files/index.js';
import type { SandboxEgress } from './egress-bridge.js';
import type { Runner, RunResult } from './runner.js';
import type { RunnerSelection } from './select-runner.js';

/** The limits a run is held to, from the node's configuration. */
export interface RunLimits {
  /** Per-stream output cap, bytes. */
  outputLimitBytes: number;
  /** Memory limit per command, bytes (0: none, where the backend enforces none). */
  memoryLimitBytes: number;
  /** Process limit per command (0: none, where the backend enforces none). */
  pidsLimit: number;
}

/** The runner, or the `no_sandbox` refusal when this node has none. */
export function requireRunner(selection: RunnerSelection): Runner {
  if ('runner' in selection) return selection.runner;
  throw new WorkbenchError('no_sandbox', selection.error.message);
}

/** Resolves a command's cwd inside the (reconciled) workspace; `.` when none. */
async function resolveCwd(workspaceDir: string, cwd: string | undefined): Promise<string> {
  if (cwd === undefined) return '.';
  const dir = await resolveWorkspacePath(workspaceDir, cwd, { allowRoot: true });
  if (dir.stat === null && dir.rel !== '') {
    throw new WorkbenchError(
      'path_not_found',
      `path_not_found: cwd "${dir.rel}" does not exist in the workspace; give a directory that exists (relative to the workspace root), or create it first with mkdir -p`,
      {
        path: dir.rel,
      },
    );
  }
  if (dir.stat !== null && !dir.stat.isDirectory()) {
    throw new WorkbenchError(
      'invalid_path',
      `invalid_path: cwd "${dir.rel}" is a file, not a directory; give the directory to run in (relative to the workspace root)`,
      {
        path: dir.rel,
      },
    );
  }
  return dir.rel || '.';
}

/**
 * Runs one command in the sandbox, in its workspace directory (a worker host runs its
 * calls' commands through it too, in its user's root, with no allowlist).
 */
export async function runInSandbox(
  deps: { runner: RunnerSelection; limits: RunLimits },
  workspaceDir: string,
  request: ExecRequest,
  timeoutMs: number,
  ctx: { signal: AbortSignal; onOutput: OutputSink; reuse?: string; egress?: SandboxEgress },
): Promise<RunResult> {
  const runner = requireRunner(deps.runner);
  const cwd = await resolveCwd(workspaceDir, request.cwd);
  // Expected outputs are the executor's business after the run, not the runner's.
  const { outputs: _outputs, ...what } = request;
  return runner.run({
    ...what,
    workspaceDir,
    cwd,
    timeoutMs,
    outputLimitBytes: deps.limits.outputLimitBytes,
    memoryLimitBytes: deps.limits.memoryLimitBytes,
    pidsLimit: deps.limits.pidsLimit,
    signal: ctx.signal,
    onOutput: ctx.onOutput,
    ...(ctx.reuse !== undefined ? { reuse: ctx.reuse } : {}),
    ...(ctx.egress !== undefined ? { egress: ctx.egress } : {}),
  });
}
