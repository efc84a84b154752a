import { join } from 'node:path';
import type Dockerode from 'dockerode';
import type { Config } from '../config/index.js';
import { MAX_READ_BYTES, MAX_WRITE_BYTES } from '../files/index.js';
import { createObjectStore, type ObjectStore, objectStoreSettings } from '../objects/index.js';
import {
  BwrapRunner,
  DockerRunner,
  ProcessRunner,
  type Runner,
  type RunnerCandidates,
  type RunnerSelection,
  SANDBOX_UID,
  selectRunner,
} from '../sandbox/index.js';
import type { Db } from '../store/index.js';
import type { Logger } from '../telemetry/index.js';
import { createCommandChecker, createSystemPathResolver } from './allowlist/index.js';
import { WorkbenchEgress } from './egress/index.js';
import { WorkbenchHost } from './host.js';

/** What the host needs beyond the configuration: handles the node owns. */
export interface HostFactoryDeps {
  db: Db;
  /** The object store; built from `MEMQL_OBJECT_STORE` when omitted. */
  objects?: ObjectStore;
  log: Logger;
  /** A Docker client, needed only when `MEMQL_RUNNER=docker`. */
  docker?: Dockerode;
  /** `process.platform` of the node. */
  platform: NodeJS.Platform;
  /** True when the node runs as root: files it writes are then handed to the sandbox uid. */
  runsAsRoot: boolean;
}

/** A host and the runner decision it was built with (for the node's startup line). */
export interface BuiltHost {
  host: WorkbenchHost;
  runner: RunnerSelection;
}

/**
 * The programs the runner's sandbox provides beyond the defaults (the docker runner's
 * image label), or none when it declares none or its image cannot be read now: the
 * allowlist then keeps its base list, and says so.
 */
async function runnerPrograms(runner: Runner, log: Logger): Promise<readonly string[]> {
  if (runner.providedPrograms === undefined) return [];
  try {
    const programs = await runner.providedPrograms();
    log.info({ runner: runner.kind, programs }, 'the runner image adds programs to the allowlist');
    return programs;
  } catch (err) {
    log.warn(
      { err, runner: runner.kind },
      'the runner image could not be read; its own programs are not allowed until the node restarts',
    );
    return [];
  }
}

/**
 * Builds the workbench host a node serves from its configuration: the runner chosen
 * by `MEMQL_RUNNER` (never silently unisolated), the allowlist with the programs the
 * runner's image declares and the operator's extras, and the exec and fetch limits.
 */
export async function createWorkbenchHost(
  config: Config,
  deps: HostFactoryDeps,
): Promise<BuiltHost> {
  const candidates: RunnerCandidates = {
    bwrap: new BwrapRunner({
      logger: deps.log,
      cpus: config.exec.cpus,
      warmIdleMs: config.exec.sandboxIdleMs,
      warmPool: {
        size: config.exec.sandboxWarmPool,
        dir: config.workbenchRoot,
        memoryLimitBytes: config.exec.memoryLimitBytes,
        pidsLimit: config.exec.pidsLimit,
      },
    }),
    process: new ProcessRunner(),
    ...(deps.docker
      ? {
          docker: new DockerRunner({
            docker: deps.docker,
            image: config.runner.image,
            nanoCpus: Math.round(config.exec.cpus * 1e9),
          }),
        }
      : {}),
  };
  const runner = await selectRunner(
    { kind: config.runner.kind, explicit: config.runner.explicit },
    candidates,
    deps.platform,
  );
  if ('error' in runner)
    deps.log.error({ reason: runner.error.message }, 'exec disabled: no sandbox');
  else {
    for (const w of runner.warnings) deps.log.warn({ runner: runner.runner.kind }, w);
    if (runner.runner.kind === 'process') {
      deps.log.warn('MEMQL_RUNNER=process: commands run WITHOUT isolation on this node');
    }
  }
  const checker = await createCommandChecker({
    extraAllowed: config.exec.allowlistExtra,
    runnerPrograms: 'runner' in runner ? await runnerPrograms(runner.runner, deps.log) : [],
    resolvePath: createSystemPathResolver(),
  });
  for (const problem of checker.refusedRunnerPrograms) {
    deps.log.warn({ image: config.runner.image }, `runner image program left out: ${problem}`);
  }
  const owner = deps.runsAsRoot ? { uid: SANDBOX_UID, gid: SANDBOX_UID } : undefined;
  const egress = await createEgress(config, deps, runner, owner);
  const host = new WorkbenchHost({
    db: deps.db,
    nodeId: config.nodeId,
    workbenchRoot: config.workbenchRoot,
    ...(owner ? { fileOwner: owner } : {}),
    files: { maxReadBytes: MAX_READ_BYTES, maxWriteBytes: MAX_WRITE_BYTES },
    objects: deps.objects ?? createObjectStore(objectStoreSettings(config.objectStore)),
    queue: config.queue,
    handoffWaitMs: config.queue.handoffWaitMs,
    quota: config.workspaceQuota,
    idleTtlMs: config.hydratedIdleTtlMs,
    warmManifestsMax: config.warmManifestsMax,
    cleanupIntervalMs: config.cleanupIntervalMs,
    uploadIdleMs: config.uploadIdleMs,
    versionRetention: config.versionRetention,
    processes: config.processes,
    exec: {
      checker,
      runner,
      limits: {
        defaultTimeoutMs: config.exec.defaultTimeoutMs,
        maxTimeoutMs: config.exec.maxTimeoutMs,
        outputLimitBytes: config.exec.outputLimitBytes,
        memoryLimitBytes: config.exec.memoryLimitBytes,
        pidsLimit: config.exec.pidsLimit,
      },
    },
    fetch: {
      maxBytes: config.fetch.maxBytes,
      timeoutMs: config.fetch.timeoutMs,
      allowPrivate: config.fetch.allowPrivate,
    },
    ...(egress ? { egress } : {}),
    log: deps.log,
  });
  return { host, runner };
}

/**
 * The node's egress, when a run may have network here: a ceiling is set and the
 * runner isolates the network (bwrap, docker). Its state lives in
 * `<workbench root>/.egress` (no run id starts with a dot).
 */
async function createEgress(
  config: Config,
  deps: HostFactoryDeps,
  runner: RunnerSelection,
  owner: { uid: number; gid: number } | undefined,
): Promise<WorkbenchEgress | null> {
  if (config.egress.ceiling.length === 0) return null;
  if (!('runner' in runner) || runner.runner.kind === 'process') {
    deps.log.warn(
      'MEMQL_EGRESS_CEILING is set but this node has no isolating runner (bwrap or docker): commands get no network',
    );
    return null;
  }
  return WorkbenchEgress.create({
    db: deps.db,
    dir: join(config.workbenchRoot, '.egress'),
    bounds: config.egress,
    secrets: config.egress.secrets,
    allowPrivate: config.fetch.allowPrivate,
    hosts: config.egress.resolve,
    extraCaPem: config.egress.caPem,
    ...(owner ? { fileOwner: owner } : {}),
    log: deps.log,
  });
}
