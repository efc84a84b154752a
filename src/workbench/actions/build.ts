/**
 * `build`: the deploy pipeline's package build, as one command of the run's workspace.
 * It is queued, run and answered exactly as an `exec` is (durable row, audit events,
 * limits, live output, changed files synced), with two differences: the command text
 * is ours, made here from validated arguments, so the exec allowlist does not apply;
 * and the node's longest exec timeout is its time limit, since installs and builds run
 * long.
 *
 * The command, in the workspace root: `git checkout` of the ref when one is given,
 * then `npm ci` from the workspace's own lockfile, then `npm run <script>`; each step
 * is traced on stderr (`set -x`) and the first one to fail ends the build with its exit
 * status. The sandbox has no network, so npm is configured offline through the
 * environment: a dependency that is not available fails at once with `ENOTCACHED`
 * instead of retrying a registry it cannot reach; no audit, fund or update-notifier
 * requests either. Its cache and HOME are the sandbox's private `/tmp`, never the
 * workspace, so nothing of npm's own is synced into it.
 *
 * @module
 */

import {
  type ActionArgs,
  buildUnavailable,
  canBuild,
  DEFAULT_BUILD_SCRIPT,
  type ExecRequest,
  errorFromResult,
  replicaBuildState,
  type Toolchain,
} from '../../contract/index.js';
import { requireRunner } from '../../sandbox/index.js';
import type { ExecDeps } from './exec.js';

/**
 * The environment of a build's command (over the runner's base: PATH, HOME, LANG).
 * `npm_config_*` entries are npm's own settings; the `GIT_CONFIG_*` triple is git's
 * command-line configuration: `safe.directory=*`, so git works in a workspace whose
 * files belong to the sandbox uid whatever uid the runner gives the command (the
 * process runner runs it as the node's user).
 */
export const BUILD_ENV: Readonly<Record<string, string>> = Object.freeze({
  HOME: '/tmp',
  npm_config_cache: '/tmp/.npm',
  npm_config_offline: 'true',
  npm_config_fetch_retries: '0',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
  npm_config_progress: 'false',
  GIT_TERMINAL_PROMPT: '0',
  GIT_CONFIG_COUNT: '1',
  GIT_CONFIG_KEY_0: 'safe.directory',
  GIT_CONFIG_VALUE_0: '*',
});

/**
 * The shell text of a build. The ref and script were validated by the contract
 * (letters, digits and a few punctuation marks, never a leading `-`) and are
 * shell-quoted all the same. `--include=dev`: a build needs its devDependencies even
 * where the image sets `NODE_ENV=production`.
 */
export function buildCommandText(args: ActionArgs<'build'>): string {
  const steps = ['set -eu', 'set -x'];
  if (args.ref !== undefined) steps.push(`git checkout --quiet ${shellWord(args.ref)} --`);
  steps.push('npm ci --include=dev');
  steps.push(`npm run ${shellWord(args.script ?? DEFAULT_BUILD_SCRIPT)}`);
  return steps.join('\n');
}

/** `value` as one single-quoted shell word. */
export function shellWord(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * Everything refused before a build is queued: a node without a sandbox
 * (`no_sandbox`), and a sandbox that cannot run the build's tools
 * (`build_unavailable`, naming what it lacks: a build never runs to fail with
 * `npm: not found`). Returns what to queue.
 *
 * @param toolchain - what this node's probe found; null when it has none.
 */
export function prepareBuild(
  deps: ExecDeps,
  args: ActionArgs<'build'>,
  toolchain: Toolchain | null,
  nodeId: string,
): { request: ExecRequest; timeoutMs: number } {
  requireRunner(deps.runner);
  if (!canBuild(toolchain)) {
    const refusal = buildUnavailable([replicaBuildState(nodeId, toolchain)]);
    throw errorFromResult(refusal);
  }
  return {
    request: { command: buildCommandText(args), env: { ...BUILD_ENV } },
    timeoutMs: deps.limits.maxTimeoutMs,
  };
}
