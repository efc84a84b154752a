import type { ActionArgs } from '../contract/index.js';
import { WorkbenchError } from '../contract/index.js';
import type { Runner, RunResult } from '../sandbox/runner.js';
import type { RunnerSelection } from '../sandbox/select-runner.js';
import { type CommandChecker, denialPayload, isSensitiveVariable } from './exec-allowlist.js';
import { resolveWorkspacePath } from './safe-path.js';

/** Limits `exec` applies, from the node's configuration. */
export interface ExecLimits {
  /** Timeout when the call gives none, ms. */
  defaultTimeoutMs: number;
  /** Largest timeout a call may ask for, ms. */
  maxTimeoutMs: number;
  /** Per-stream output cap, bytes. */
  outputLimitBytes: number;
  /** Memory limit per command, bytes. */
  memoryLimitBytes: number;
  /** Process limit per command. */
  pidsLimit: number;
}

/** What `exec` answers. A non-zero exit is an answer, not an error. */
export interface ExecPayload {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  oomKilled: boolean;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  durationMs: number;
}

/** Everything `exec` needs besides the call. */
export interface ExecDeps {
  checker: CommandChecker;
  runner: RunnerSelection;
  limits: ExecLimits;
  /** Waits for a runner slot; resolves to a release function. */
  acquireSlot: () => Promise<() => void>;
}

function toPayload(r: RunResult): ExecPayload {
  return {
    exitCode: r.exitCode,
    signal: r.signal,
    timedOut: r.timedOut,
    cancelled: r.cancelled,
    oomKilled: r.oomKilled,
    stdout: r.stdout.toString('utf8'),
    stderr: r.stderr.toString('utf8'),
    stdoutTruncated: r.stdoutTruncated,
    stderrTruncated: r.stderrTruncated,
    durationMs: r.durationMs,
  };
}

/** The runner, or the `no_sandbox` refusal when this node has none. */
export function requireRunner(selection: RunnerSelection): Runner {
  if ('runner' in selection) return selection.runner;
  throw new WorkbenchError('no_sandbox', selection.error.message);
}

/**
 * `exec`: the allowlist on a real parse of the whole command, then a sandbox run in
 * the workspace (after waiting for a runner slot). The allowlist is defence in depth;
 * the sandbox is the boundary.
 */
export async function runExec(
  deps: ExecDeps,
  workspaceDir: string,
  args: ActionArgs<'exec'>,
  opts: { signal?: AbortSignal; onOutput?: (s: 'stdout' | 'stderr', c: Buffer) => void } = {},
): Promise<ExecPayload> {
  const verdict = deps.checker.check(args.command);
  if (!verdict.ok) {
    throw new WorkbenchError(
      'command_not_allowed',
      `command_not_allowed: ${verdict.message}`,
      denialPayload(verdict),
    );
  }
  for (const name of Object.keys(args.env ?? {})) {
    if (isSensitiveVariable(name)) {
      throw new WorkbenchError(
        'invalid_arguments',
        `invalid_arguments: args.env.${name}: this variable changes which programs run or how; it cannot be set`,
        { field: `args.env.${name}` },
      );
    }
  }
  const runner = requireRunner(deps.runner);
  const timeoutMs = args.timeoutMs ?? deps.limits.defaultTimeoutMs;
  if (timeoutMs > deps.limits.maxTimeoutMs) {
    throw new WorkbenchError(
      'invalid_arguments',
      `invalid_arguments: args.timeoutMs: ${timeoutMs} is over this node's limit of ${deps.limits.maxTimeoutMs} ms`,
    );
  }
  let cwd = '.';
  if (args.cwd !== undefined) {
    const dir = await resolveWorkspacePath(workspaceDir, args.cwd, { allowRoot: true });
    if (dir.stat === null && dir.rel !== '') {
      throw new WorkbenchError(
        'path_not_found',
        `path_not_found: cwd "${dir.rel}" does not exist`,
        {
          path: dir.rel,
        },
      );
    }
    if (dir.stat !== null && !dir.stat.isDirectory()) {
      throw new WorkbenchError(
        'invalid_path',
        `invalid_path: cwd "${dir.rel}" is not a directory`,
        {
          path: dir.rel,
        },
      );
    }
    cwd = dir.rel || '.';
  }
  const release = await deps.acquireSlot();
  try {
    const result = await runner.run({
      workspaceDir,
      cwd,
      command: args.command,
      ...(args.env ? { env: args.env } : {}),
      ...(args.stdin !== undefined ? { stdin: args.stdin } : {}),
      timeoutMs,
      outputLimitBytes: deps.limits.outputLimitBytes,
      memoryLimitBytes: deps.limits.memoryLimitBytes,
      pidsLimit: deps.limits.pidsLimit,
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.onOutput ? { onOutput: opts.onOutput } : {}),
    });
    return toPayload(result);
  } finally {
    release();
  }
}

/** A counting semaphore: at most `size` holders; the rest wait in arrival order. */
export function createSlots(size: number): () => Promise<() => void> {
  let free = size;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else free += 1;
  };
  return () =>
    new Promise((grant) => {
      const give = () => grant(once(release));
      if (free > 0) {
        free -= 1;
        give();
      } else {
        waiting.push(give);
      }
    });
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (!done) {
      done = true;
      fn();
    }
  };
}
