import type { ActionArgs, ExecPayload, ExecRequest } from '../../contract/index.js';
import { execRequestOf, isErrorCode, WorkbenchError } from '../../contract/index.js';
import { checkWorkspaceFilePath, splitWorkspacePath } from '../../files/index.js';
import { commandAnswer, FILES_NOT_SAVED } from '../../queue/index.js';
import { type RunLimits, type RunnerSelection, requireRunner } from '../../sandbox/index.js';
import type { Command } from '../../store/index.js';
import { type CommandChecker, denialPayload, isSensitiveVariable } from '../allowlist/index.js';

/** Limits `exec` applies, from the node's configuration: the run's, and its timeouts. */
export interface ExecLimits extends RunLimits {
  /** Timeout when the call gives none, ms. */
  defaultTimeoutMs: number;
  /** Largest timeout a call may ask for, ms. */
  maxTimeoutMs: number;
}

/** What `exec` needs besides the call. */
export interface ExecDeps {
  checker: CommandChecker;
  runner: RunnerSelection;
  limits: ExecLimits;
}

export type { ExecPayload };

/**
 * Everything refused before a command is queued: the allowlist on a real parse of
 * the whole command, environment names that change what runs, the timeout bound, a
 * cwd or an expected output that is no workspace path, and a node without a sandbox.
 * Returns what to queue.
 */
export function prepareExec(
  deps: ExecDeps,
  args: ActionArgs<'exec'>,
): { request: ExecRequest; timeoutMs: number } {
  const verdict = deps.checker.check(args.command);
  if (!verdict.ok) {
    throw new WorkbenchError(
      'command_not_allowed',
      `command_not_allowed: ${verdict.message}`,
      denialPayload(verdict, deps.checker),
    );
  }
  // The names and values were checked where the call was parsed; which variables may
  // be set at all is this node's rule.
  for (const name of Object.keys(args.env ?? {})) {
    if (isSensitiveVariable(name)) {
      throw new WorkbenchError(
        'invalid_arguments',
        `invalid_arguments: args.env.${name}: this variable changes which programs run or how; it cannot be set`,
        { field: `args.env.${name}` },
      );
    }
  }
  const timeoutMs = args.timeoutMs ?? deps.limits.defaultTimeoutMs;
  if (timeoutMs > deps.limits.maxTimeoutMs) {
    throw new WorkbenchError(
      'invalid_arguments',
      `invalid_arguments: args.timeoutMs: ${timeoutMs} is over this node's limit of ${deps.limits.maxTimeoutMs} ms`,
    );
  }
  if (args.cwd !== undefined && args.cwd !== '.') splitWorkspacePath(args.cwd);
  // An output path that can never be a workspace file (absolute, or climbing out by
  // `..`) is the call's mistake, refused before anything runs; what the command leaves
  // there (a link out, say) is checked once it has run.
  for (const output of args.outputs ?? []) checkWorkspaceFilePath(output.path);
  requireRunner(deps.runner);
  return { request: execRequestOf(args), timeoutMs };
}

/**
 * The `exec` answer for a terminal command row. A command that did not end on its own
 * terms (`failed`) is the caller's error, with a message for each way that happens:
 * it could not run; it was lost with its node (`command_lost`); its node stopped
 * during it (`node_stopping`); or it ran but its file changes were not kept. Every
 * other end is an answer. Output a failed command did produce rides in the payload.
 */
export function execPayload(command: Command): ExecPayload {
  if (command.status === 'failed') {
    const code = isErrorCode(command.errorCode) ? command.errorCode : 'internal';
    const base = { commandId: command.id, errorCategory: command.errorCategory };
    switch (command.errorCategory) {
      case 'recovered_stale':
        throw new WorkbenchError(
          code,
          `${code}: command ${command.id} was lost with the node running it before its outcome was recorded; file changes it had committed are kept. Check the workspace, then run it again with a new callId (a repeated callId keeps answering this)`,
          { ...base, retry: 'new_call_id' },
        );
      case 'shutdown':
        throw new WorkbenchError(
          code,
          `${code}: the node running command ${command.id} shut down and cut it off; files it wrote until then are kept. Run it again (with a new callId)`,
          { ...base, retry: 'new_call_id', ...commandAnswer(command) },
        );
      case FILES_NOT_SAVED:
        if (code === 'workspace_quota_exceeded') {
          throw new WorkbenchError(
            code,
            `${code}: command ${command.id} filled the workspace past its quota (MEMQL_WORKSPACE_MAX_BYTES, MEMQL_WORKSPACE_MAX_FILES) and was stopped; none of its changes were kept. Delete files, or make the command write less`,
            { ...base, retry: 'new_call_id', ...commandAnswer(command) },
          );
        }
        throw new WorkbenchError(
          code,
          `${code}: command ${command.id} ran (exit code ${command.exitCode ?? 'none'}) but its file changes could not be saved, so they are not in the workspace; run it again (with a new callId)`,
          { ...base, retry: 'new_call_id', ...commandAnswer(command) },
        );
      default: {
        const cwd = command.execRequest?.cwd;
        if (cwd !== undefined && (code === 'path_not_found' || code === 'invalid_path')) {
          // The directory to run in is checked once the workspace is current, so the
          // refusal comes back through the row: say which cwd, and what to do.
          throw new WorkbenchError(
            code,
            code === 'path_not_found'
              ? `${code}: cwd "${cwd}" does not exist in the workspace, so command ${command.id} did not run; give a directory that exists (relative to the workspace root), or create it first with mkdir -p`
              : `${code}: cwd "${cwd}" is not a directory inside the workspace (a file, or a link out of it), so command ${command.id} did not run; give a directory relative to the workspace root`,
            { ...base, path: cwd },
          );
        }
        throw new WorkbenchError(
          code,
          `${code}: command ${command.id} could not run (${command.errorCategory ?? 'no detail'})`,
          base,
        );
      }
    }
  }
  return { commandId: command.id, ...commandAnswer(command) };
}
