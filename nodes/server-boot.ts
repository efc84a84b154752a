/**
 * Boot steps of the nodes that hold a store or a workbench host (agent, workbench,
 * local): the workbench host with a Docker client when the operator chose the docker
 * runner, the fleet and affinity reads of a node whose workbench runs in its own
 * process, the workbench root the sandbox user can reach, and what a failed start
 * prints. The worker host's binary imports none of this (`node-boot.ts` holds what
 * every node shares).
 */
import { statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type FleetSource, localFleet } from '../src/api/index.js';
import type { Config } from '../src/config/index.js';
import type { ObjectStore } from '../src/objects/index.js';
import {
  countLiveCommands,
  DataDirLockedError,
  type Db,
  getLiveWorkspace,
} from '../src/store/index.js';
import type { Logger } from '../src/telemetry/index.js';
import type { WorkbenchHost } from '../src/workbench/index.js';
import { type BuiltHost, createWorkbenchHost } from '../src/workbench/index.js';
import { ListenRefusedError } from './node-boot.js';

/** Builds this process's workbench host from the configuration. */
export async function buildNodeHost(
  config: Config,
  deps: { db: Db; log: Logger; objects?: ObjectStore },
): Promise<BuiltHost> {
  return createWorkbenchHost(config, {
    ...deps,
    platform: process.platform,
    runsAsRoot: process.getuid?.() === 0,
    // Docker's client is loaded only by a node that runs commands in containers.
    ...(config.runner.kind === 'docker'
      ? { docker: new (await import('dockerode')).default({ socketPath: '/var/run/docker.sock' }) }
      : {}),
  });
}

/** The fleet of a node whose workbench runs in its own process: that one host. */
export function inProcessFleet(config: Config, host: WorkbenchHost, db: Db): FleetSource {
  const since = new Date();
  return localFleet({
    nodeId: config.nodeId,
    capacity: config.queue.concurrency,
    since,
    healthy: () => host.queue.lifecycle === 'running',
    running: () => host.queue.runningHere().length,
    queued: async () => (await countLiveCommands(db)).queued,
    toolchain: () => host.toolchain(),
  });
}

/** The run's live workspace node, the agent's affinity read. */
export function affinityReader(db: Db): (runId: string) => Promise<string | null> {
  return async (runId) => (await getLiveWorkspace(db, runId))?.nodeId ?? null;
}

/**
 * The sandbox user (uid 10001) must be able to pass through every parent of the
 * workspace root. A checkout under a private home (`/root`, mode 0700) cannot hold
 * workspaces then, so a node running as root uses a directory under the system's
 * temp folder instead (warm copies only: the durable copy is the manifest and the
 * object store). Returns the directory to use and why, when it differs.
 */
export function reachableWorkbenchRoot(
  preferred: string,
  nodeId: string,
): { root: string; reason?: string } {
  if (process.getuid?.() !== 0) return { root: preferred };
  for (let dir = dirname(preferred); ; dir = dirname(dir)) {
    try {
      if ((statSync(dir).mode & 0o001) === 0) {
        return {
          // One folder a node: two local nodes never share (and sweep) warm copies.
          root: join(tmpdir(), 'memql-workbenches', nodeId),
          reason: `${dir} is not searchable by the sandbox uid 10001`,
        };
      }
    } catch {
      // Not created yet: its parent decides.
    }
    if (dir === dirname(dir)) return { root: preferred };
  }
}

/** What a node prints when it fails to start: a refusal as it is, anything else with its stack. */
export function startFailureText(err: unknown): string {
  if (err instanceof ListenRefusedError || err instanceof DataDirLockedError) return err.message;
  return (err as Error)?.stack ?? String(err);
}
