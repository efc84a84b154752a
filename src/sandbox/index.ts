/**
 * The sandbox: the {@link Runner} interface every backend implements, the choice of
 * backend (`selectRunner`), the unisolated process runner, and the rooms behind this
 * door (`bwrap/`, `docker/`, `cgroups/`, `seccomp/`, `egress/`).
 *
 * ```ts
 * const selection = await selectRunner(choice, { bwrap, docker, process });
 * if ('runner' in selection) await selection.runner.run(spec);
 * ```
 *
 * @packageDocumentation
 */
export { BwrapRunner, type ProcessExit, type SessionProcess } from './bwrap/index.js';
export { DockerRunner } from './docker/index.js';
export {
  type EgressConnection,
  type EgressEndpoint,
  EgressProxy,
  type EgressSecret,
  systemResolve,
} from './egress/index.js';
export type { SandboxEgress } from './egress-bridge.js';
export { ProcessRunner } from './process-runner.js';
export { type RunLimits, requireRunner, runInSandbox } from './run-request.js';
export { type Runner, type RunResult, SANDBOX_UID } from './runner.js';
export {
  type RunnerCandidates,
  type RunnerSelection,
  selectRunner,
  sweepRunnerLeftovers,
} from './select-runner.js';
