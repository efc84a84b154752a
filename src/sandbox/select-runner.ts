/**
 * Which backend runs commands on this node. The rule (docs/ARCHITECTURE.md, "Where
 * decisions live"): a node without a working sandbox refuses to run commands
 * (`no_sandbox`) unless the operator explicitly chose the `process` runner. `auto`
 * never falls back to running unisolated.
 *
 * @module
 */

import type { Runner, RunnerKind } from './runner.js';

/** The operator's choice, from `MEMQL_RUNNER` (`explicit` when the variable was set). */
export interface RunnerChoice {
  kind: 'auto' | RunnerKind;
  explicit: boolean;
}

/** The runners this node could build; absent ones are not available here. */
export interface RunnerCandidates {
  bwrap?: Runner;
  docker?: Runner;
  process?: Runner;
}

/** The selected runner, or why there is none. */
export type RunnerSelection =
  | { runner: Runner; warnings: readonly string[] }
  | { error: { code: 'no_sandbox'; message: string } };

const INSTALL_HINT =
  'apt-get install bubblewrap, or set MEMQL_RUNNER=docker with a reachable Docker daemon, ' +
  'or set MEMQL_RUNNER=process to run commands without isolation on purpose';

/**
 * Picks the runner for `choice`, probing only the candidate it needs.
 *
 * - `auto`: bwrap on Linux when its probe passes; otherwise `no_sandbox`.
 * - `bwrap` / `docker`: that backend when its probe passes; otherwise `no_sandbox` with
 *   the probe's reason.
 * - `process`: the process runner (explicit by definition; an `auto` never reaches it).
 */
export async function selectRunner(
  choice: RunnerChoice,
  candidates: RunnerCandidates,
  platform: NodeJS.Platform = process.platform,
): Promise<RunnerSelection> {
  const refuse = (message: string): RunnerSelection => ({
    error: { code: 'no_sandbox', message: `no_sandbox: ${message}` },
  });
  switch (choice.kind) {
    case 'auto': {
      if (platform !== 'linux') {
        return refuse(
          `no sandbox backend on ${platform} (bwrap needs Linux); set MEMQL_RUNNER=docker with a reachable Docker daemon, or MEMQL_RUNNER=process to run commands without isolation on purpose`,
        );
      }
      const bwrap = candidates.bwrap;
      if (!bwrap) return refuse(`no bwrap runner on this node; ${INSTALL_HINT}`);
      const probe = await bwrap.probe();
      if (probe.ok) return { runner: bwrap, warnings: probe.warnings ?? [] };
      return refuse(`bubblewrap is not usable: ${probe.reason}; ${INSTALL_HINT}`);
    }
    case 'bwrap':
    case 'docker': {
      const runner = candidates[choice.kind];
      if (!runner) {
        return refuse(`MEMQL_RUNNER=${choice.kind} but this node has no ${choice.kind} runner`);
      }
      const probe = await runner.probe();
      if (probe.ok) return { runner, warnings: probe.warnings ?? [] };
      return refuse(`MEMQL_RUNNER=${choice.kind} is not usable: ${probe.reason}`);
    }
    case 'process': {
      // The config marks `process` explicit whenever it is chosen; refuse an inconsistent choice.
      const runner = candidates.process;
      if (!choice.explicit || !runner) {
        return refuse(
          `the process runner runs only when MEMQL_RUNNER=process is set; ${INSTALL_HINT}`,
        );
      }
      return {
        runner,
        warnings: ['MEMQL_RUNNER=process: commands run WITHOUT a sandbox, as the node user'],
      };
    }
  }
}

/**
 * The selected runner's {@link Runner.sweepLeftovers}, for the node's periodic cleanup;
 * 0 when there is no runner or it leaves nothing behind.
 */
export async function sweepRunnerLeftovers(selection: RunnerSelection): Promise<number> {
  if (!('runner' in selection)) return 0;
  return (await selection.runner.sweepLeftovers?.()) ?? 0;
}
