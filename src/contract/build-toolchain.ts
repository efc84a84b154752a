/**
 * What a replica needs to `build`, what it reports about it, and the refusal when no
 * replica can. The runbook's failure to avoid: a build sent to a replica whose sandbox
 * has no npm fails as `npm: not found` on a cluster that looks correctly configured.
 * So each workbench replica probes its own sandbox at start, reports the result in its
 * Health frames, and a build goes only to a replica that reported it can run every
 * tool below; when none can, the call is refused with `build_unavailable`, naming what
 * each replica lacks, before anything runs.
 *
 * @module
 */

import { type DispatchFailure, errorResult } from './result.js';

/** The programs a build runs in the sandbox: `git` (checkout), `npm` (install, script), `node`. */
export const BUILD_TOOLS = ['node', 'npm', 'git'] as const;

/** One of {@link BUILD_TOOLS}. */
export type BuildTool = (typeof BUILD_TOOLS)[number];

/** The npm script a build runs when the call names none. */
export const DEFAULT_BUILD_SCRIPT = 'build';

/**
 * What a replica knows about its sandbox's toolchain, as its Health frames carry it:
 *
 * - `probed`: the probe ran; `missing` lists the {@link BUILD_TOOLS} the sandbox could
 *   not run (empty: it can build).
 * - `probe_failed`: the probe could not run a command at all (no sandbox, say);
 *   `reason` says why.
 *
 * A replica that has not reported (its probe still runs, or it predates toolchain
 * reports) has no toolchain: `null` wherever one is expected, which counts as cannot
 * build.
 */
export type Toolchain =
  | { readonly status: 'probed'; readonly missing: readonly BuildTool[] }
  | { readonly status: 'probe_failed'; readonly reason: string };

/** Whether a replica with `toolchain` can build: it probed, and nothing is missing. */
export function canBuild(toolchain: Toolchain | null | undefined): boolean {
  return toolchain?.status === 'probed' && toolchain.missing.length === 0;
}

/** Whether `value` names one of {@link BUILD_TOOLS}. */
export function isBuildTool(value: unknown): value is BuildTool {
  return typeof value === 'string' && (BUILD_TOOLS as readonly string[]).includes(value);
}

/**
 * Why a replica's toolchain counts as unable to build, as `build_unavailable` reports
 * it: `missing_tools` (probed, some missing), `probe_failed`, or `not_reported` (still
 * probing, or a replica that predates toolchain reports).
 */
export type ToolchainProblem = 'missing_tools' | 'probe_failed' | 'not_reported';

/** One replica in the payload of `build_unavailable`. */
export interface ReplicaBuildState {
  /** Its `MEMQL_NODE_ID`; null when it has not said hello. */
  readonly nodeId: string | null;
  /**
   * The tools it has not shown it can run: what its probe found missing, or every one
   * of {@link BUILD_TOOLS} when it has no usable report.
   */
  readonly missing: readonly BuildTool[];
  /** Why it cannot build. */
  readonly problem: ToolchainProblem;
}

/** The payload of `build_unavailable`: every replica considered, and what each lacks. */
export interface BuildUnavailablePayload {
  readonly replicas: readonly ReplicaBuildState[];
}

/** What stands between one replica and a build. */
export function replicaBuildState(
  nodeId: string | null,
  toolchain: Toolchain | null | undefined,
): ReplicaBuildState {
  if (toolchain?.status === 'probed') {
    return { nodeId, missing: [...toolchain.missing], problem: 'missing_tools' };
  }
  return {
    nodeId,
    missing: [...BUILD_TOOLS],
    problem: toolchain?.status === 'probe_failed' ? 'probe_failed' : 'not_reported',
  };
}

/** One replica's part of the message, e.g. `wb-a lacks npm, git`. */
function describe(state: ReplicaBuildState): string {
  const name = state.nodeId ?? '(a replica that has not said hello)';
  switch (state.problem) {
    case 'missing_tools':
      return `${name} lacks ${state.missing.join(', ')}`;
    case 'probe_failed':
      return `${name} could not probe its sandbox (see its log)`;
    case 'not_reported':
      return `${name} has not reported its toolchain (still probing, or an older version)`;
  }
}

/**
 * The refusal of a build no replica can run. The message names what each replica
 * lacks and what to do; the payload is {@link BuildUnavailablePayload}. Nothing ran.
 *
 * @param replicas - the healthy replicas considered (or the one that refused the call).
 */
export function buildUnavailable(replicas: readonly ReplicaBuildState[]): DispatchFailure {
  const which =
    replicas.length === 0
      ? 'no workbench replica reported a toolchain'
      : replicas.map(describe).join('; ');
  return errorResult(
    'build_unavailable',
    `build_unavailable: no healthy workbench replica can build (${which}). A build needs ${BUILD_TOOLS.join(', ')} in the replica's sandbox: run a replica from the workbench-runtime image, which carries node, npm and git (with MEMQL_RUNNER=docker, set MEMQL_RUNNER_IMAGE to an image that carries them), then retry. Nothing ran.`,
    { replicas } satisfies BuildUnavailablePayload,
  );
}
