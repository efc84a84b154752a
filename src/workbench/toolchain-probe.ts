/**
 * Which of the build's tools this node's sandbox can run, found by running them there:
 * `node --version`, `npm --version` and `git --version`, through the node's own runner,
 * with the build's environment, in a scratch directory outside every workspace. What a
 * replica can build is a fact about its sandbox (the runner image of the docker
 * backend, the node's own `/usr` for bwrap), not about the node's process, so it is
 * measured where a build would run, once at start, and reported in Health frames.
 *
 * @module
 */

import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILD_TOOLS, type Toolchain, WorkbenchError } from '../contract/index.js';
import type { Runner, RunnerSelection } from '../sandbox/index.js';
import type { Logger } from '../telemetry/index.js';
import { BUILD_ENV } from './actions/index.js';

/** How long the probe may take, ms: three `--version` runs, on a loaded host. */
export const TOOLCHAIN_PROBE_TIMEOUT_MS = 60_000;

/** Prints `ok <tool>` for each build tool that runs. */
export const TOOLCHAIN_PROBE_SCRIPT = BUILD_TOOLS.map(
  (tool) => `if ${tool} --version >/dev/null 2>&1; then echo "ok ${tool}"; fi`,
).join('\n');

/** Where and how the probe runs. */
export interface ToolchainProbeOptions {
  /** Where the scratch directory is made. Default the OS temp dir. */
  scratchRoot?: string;
  /** Owner of the scratch directory: the sandbox uid when the node runs as root. */
  owner?: { uid: number; gid: number };
  /** Default {@link TOOLCHAIN_PROBE_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** Ends the probe's sandbox early (the node stops); it then counts as failed. */
  signal?: AbortSignal;
}

/**
 * Runs the probe once through `runner`. Never throws: a sandbox that cannot run the
 * probe at all is `probe_failed`, with why.
 */
export async function probeToolchain(
  runner: Runner,
  options: ToolchainProbeOptions = {},
): Promise<Toolchain> {
  let dir: string | null = null;
  try {
    dir = await mkdtemp(join(options.scratchRoot ?? tmpdir(), 'memql-toolchain-probe-'));
    if (options.owner) await chown(dir, options.owner.uid, options.owner.gid);
    const result = await runner.run({
      workspaceDir: dir,
      command: TOOLCHAIN_PROBE_SCRIPT,
      env: { ...BUILD_ENV },
      timeoutMs: options.timeoutMs ?? TOOLCHAIN_PROBE_TIMEOUT_MS,
      outputLimitBytes: 4096,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (result.timedOut) {
      return { status: 'probe_failed', reason: 'the probe command timed out' };
    }
    if (result.cancelled) return { status: 'probe_failed', reason: 'the node stopped' };
    const ran = new Set(
      result.stdout
        .toString('utf8')
        .split('\n')
        .map((line) => line.trim()),
    );
    return { status: 'probed', missing: BUILD_TOOLS.filter((tool) => !ran.has(`ok ${tool}`)) };
  } catch (err) {
    const reason = err instanceof WorkbenchError ? err.message : 'the probe command could not run';
    return { status: 'probe_failed', reason };
  } finally {
    if (dir !== null) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** What {@link ToolchainWatch} is built from. */
export interface ToolchainWatchDeps extends ToolchainProbeOptions {
  runner: RunnerSelection;
  nodeId: string;
  log: Logger;
}

/**
 * The node's toolchain: unknown (`null`) until its one probe ends, then what it found.
 * The probe starts with {@link ToolchainWatch.settled}, at most once per node, and
 * {@link ToolchainWatch.stop} ends it, so no probe sandbox outlives its node.
 */
export class ToolchainWatch {
  private found: Toolchain | null = null;
  private probe: Promise<Toolchain> | null = null;
  private readonly stopping = new AbortController();

  constructor(private readonly deps: ToolchainWatchDeps) {}

  /** What the probe found; `null` before it has ended. */
  current(): Toolchain | null {
    return this.found;
  }

  /** Starts the probe (once) and resolves with what it found. Never rejects. */
  settled(): Promise<Toolchain> {
    this.probe ??= this.run().then((toolchain) => {
      this.found = toolchain;
      const { log, nodeId } = this.deps;
      if (toolchain.status === 'probe_failed') {
        log.warn({ nodeId, reason: toolchain.reason }, 'build toolchain probe failed: no builds');
      } else if (toolchain.missing.length > 0) {
        log.info(
          { nodeId, missing: toolchain.missing },
          'build toolchain incomplete: this replica takes no builds',
        );
      } else log.info({ nodeId }, 'build toolchain present: this replica can build');
      return toolchain;
    });
    return this.probe;
  }

  /** Ends a probe still running and waits for it. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.probe;
  }

  private async run(): Promise<Toolchain> {
    const selection = this.deps.runner;
    if (!('runner' in selection))
      return { status: 'probe_failed', reason: selection.error.message };
    if (this.stopping.signal.aborted) return { status: 'probe_failed', reason: 'the node stopped' };
    const { runner: _r, nodeId: _n, log: _l, ...options } = this.deps;
    return probeToolchain(selection.runner, { ...options, signal: this.stopping.signal });
  }
}
