/**
 * The `process` backend: NOT A SANDBOX.
 *
 * Commands run as `/bin/sh -c` directly on the host, as the node's own user, with the
 * host's whole filesystem and network. Only two things are kept from the sandbox
 * contract: the environment (`PATH`, or a base its owner passes, and the agent's
 * entries; never the node's own environment) and the limits on time and output, with the process group killed on
 * timeout or cancel. Memory and process limits are not enforced, and a command that
 * leaves its process group (`setsid`) escapes the tree kill.
 *
 * It exists for development hosts without bubblewrap or Docker, and is used only when
 * an operator sets `MEMQL_RUNNER=process` explicitly; `auto` never picks it (see
 * {@link selectRunner}).
 *
 * @module
 */

import { spawn } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { join } from 'node:path';
import { commandEnv, SANDBOX_PATH } from './command-env.js';
import { createCommandOutput } from './output-capture.js';
import type { Runner, RunnerProbe, RunResult, RunSpec } from './runner.js';
import { cancelledBeforeStart, superviseChild } from './supervise.js';
import { resolveCwd } from './workspace-path.js';

/** Options of {@link ProcessRunner}. */
export interface ProcessRunnerOptions {
  /** The shell commands run with. Default `/bin/sh`. */
  shellPath?: string;
  /** coreutils `env`, which sets the exact environment. Default `/usr/bin/env`. */
  envPath?: string;
  /**
   * The environment every command starts from, under the agent's entries. Default
   * `PATH` = {@link SANDBOX_PATH} alone. A worker host passes the few variables it
   * chose from its user's session (never its own environment wholesale); `PATH` stays
   * {@link SANDBOX_PATH} unless this sets it.
   */
  baseEnv?: Readonly<Record<string, string>>;
}

/** Runs commands without isolation; see the module comment before using it. */
export class ProcessRunner implements Runner {
  readonly kind = 'process' as const;
  private readonly shellPath: string;
  private readonly envPath: string;
  private readonly baseEnv: Readonly<Record<string, string>>;

  constructor(options: ProcessRunnerOptions = {}) {
    this.shellPath = options.shellPath ?? '/bin/sh';
    this.envPath = options.envPath ?? '/usr/bin/env';
    this.baseEnv = { PATH: SANDBOX_PATH, ...options.baseEnv };
  }

  /** Passes when the shell and `env` exist; there is nothing else to check. */
  async probe(): Promise<RunnerProbe> {
    for (const path of [this.shellPath, this.envPath]) {
      try {
        await access(path, constants.X_OK);
      } catch {
        return { ok: false, reason: `${path} not found or not executable` };
      }
    }
    return { ok: true };
  }

  async run(spec: RunSpec): Promise<RunResult> {
    const startedAt = performance.now();
    const env = commandEnv(this.baseEnv, spec.env);
    const cwd = join(spec.workspaceDir, resolveCwd(spec.cwd));
    if (spec.signal?.aborted) return cancelledBeforeStart(startedAt);
    const output = createCommandOutput(spec.outputLimitBytes, spec.onOutput);
    // `env -i` sets exactly this environment even when something in the node (a preload,
    // an instrumentation hook) adds variables to every spawn. detached: the command
    // leads a new process group, so the whole group can be killed.
    const assignments = Object.entries(env).map(([name, value]) => `${name}=${value}`);
    const child = spawn(
      this.envPath,
      ['-i', '--', ...assignments, this.shellPath, '-c', spec.command],
      { cwd, env: {}, detached: true, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const end = await superviseChild(child, {
      output,
      stdin: spec.stdin,
      timeoutMs: spec.timeoutMs,
      signal: spec.signal,
      killTree: () => {
        if (child.pid === undefined) return;
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // The group is already empty.
        }
      },
    });
    return {
      ...end,
      oomKilled: false,
      stdout: output.stdout.bytes(),
      stderr: output.stderr.bytes(),
      stdoutTruncated: output.stdout.truncated,
      stderrTruncated: output.stderr.truncated,
      durationMs: Math.round(performance.now() - startedAt),
    };
  }
}
