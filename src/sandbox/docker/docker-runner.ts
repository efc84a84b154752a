/**
 * The `docker` backend: each command runs in a fresh container of the runner image,
 * with the workspace bind-mounted read-write at `/workspace` and everything else
 * locked down (no network, no capabilities, read-only root, uid 10001, limits).
 *
 * The life of one container: create → attach → start → wait (or kill on timeout or
 * cancel) → inspect → remove. Removal is forced in a `finally`, so no container is left
 * behind when anything in between fails.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import { posix, resolve } from 'node:path';
import type Dockerode from 'dockerode';
import { commandEnv, SANDBOX_PATH } from '../command-env.js';
import {
  bridgedCommand,
  EGRESS_CA_BUNDLE_PATH,
  EGRESS_CACHE_PATH,
  EGRESS_SOCKET_PATH,
  egressEnvironment,
  type SandboxEgress,
} from '../egress-bridge.js';
import { createCommandOutput } from '../output-capture.js';
import {
  type Runner,
  type RunnerProbe,
  type RunResult,
  type RunSpec,
  SANDBOX_UID,
} from '../runner.js';
import { requireCwdDirectory, resolveCwd } from '../workspace-path.js';
import {
  type DockerErrorContext,
  describeDaemon,
  dockerStatus,
  dockerWorkbenchError,
  translateDockerError,
} from './docker-errors.js';

/** Where the workspace appears inside the container. */
export const CONTAINER_WORKSPACE = '/workspace';

/** Label set on every container this runner creates, with the value `docker`. */
export const SANDBOX_LABEL = 'memql.sandbox';
/**
 * Image label naming the image's process 1 (an absolute path). When the runner image
 * carries it, commands start through that init (`deploy/runner/init.py`: it keeps the
 * container's environment out of reach through `/proc/1/environ`); otherwise the
 * image's entrypoint is cleared and the command is process 1 itself.
 */
export const INIT_LABEL = 'memql.runner.init';

/**
 * Image label naming the programs the image provides beyond the base allowlist,
 * space-separated (`soffice pdftoppm convert`): commands run on this runner may use
 * them (the exec allowlist adds them; see `workbench/allowlist`). The `runner` target of
 * `deploy/Dockerfile` declares LibreOffice, Poppler and ImageMagick this way.
 */
export const PROGRAMS_LABEL = 'memql.runner.programs';

/** Label carrying a per-command id, unique to one container. */
export const COMMAND_LABEL = 'memql.command';

/** Options of {@link DockerRunner}. */
export interface DockerRunnerOptions {
  /** A Dockerode client for the daemon; the runner never builds one from the environment. */
  docker: Dockerode;
  /** The runner image, e.g. `memql/runner:latest` (`MEMQL_RUNNER_IMAGE`). */
  image: string;
  /** CPU quota in units of 1e-9 CPUs. Default `1e9` (one CPU). */
  nanoCpus?: number;
  /** Memory limit when a spec sets none, in bytes. Default 2 GiB. */
  defaultMemoryLimitBytes?: number;
  /** Process limit when a spec sets none. Default 512. */
  defaultPidsLimit?: number;
  /** Size of the `/tmp` tmpfs in bytes. Default 64 MiB. */
  tmpSizeBytes?: number;
  /** Extra labels set on every container (e.g. the node id), to find them with a filter. */
  labels?: Record<string, string>;
  /**
   * How long to keep reading output after the container has exited, in milliseconds,
   * before giving up on the attach stream. Default 5000.
   */
  outputDrainMs?: number;
}

const DEFAULT_NANO_CPUS = 1_000_000_000;
const DEFAULT_MEMORY_LIMIT_BYTES = 2 * 1024 ** 3;
const DEFAULT_PIDS_LIMIT = 512;
const DEFAULT_TMP_SIZE_BYTES = 64 * 1024 ** 2;
const DEFAULT_OUTPUT_DRAIN_MS = 5000;
/** Docker refuses memory limits under 6 MiB. */
const MIN_MEMORY_LIMIT_BYTES = 6 * 1024 ** 2;

/** Why the runner ended a command itself; `null` while the command runs its course. */
type Ending = 'timeout' | 'cancel' | null;

/** A {@link Runner} backed by a Docker daemon. */
export class DockerRunner implements Runner {
  readonly kind = 'docker' as const;
  readonly #docker: Dockerode;
  readonly #image: string;
  readonly #nanoCpus: number;
  readonly #defaultMemoryLimitBytes: number;
  readonly #defaultPidsLimit: number;
  readonly #tmpSizeBytes: number;
  readonly #labels: Record<string, string>;
  readonly #outputDrainMs: number;
  readonly #errorContext: DockerErrorContext;
  /** The image's labels, read once (again after a failed read). */
  #labelsRead: Promise<Readonly<Record<string, string>>> | null = null;

  constructor(options: DockerRunnerOptions) {
    this.#docker = options.docker;
    this.#image = options.image;
    this.#nanoCpus = options.nanoCpus ?? DEFAULT_NANO_CPUS;
    this.#defaultMemoryLimitBytes = options.defaultMemoryLimitBytes ?? DEFAULT_MEMORY_LIMIT_BYTES;
    this.#defaultPidsLimit = options.defaultPidsLimit ?? DEFAULT_PIDS_LIMIT;
    this.#tmpSizeBytes = options.tmpSizeBytes ?? DEFAULT_TMP_SIZE_BYTES;
    this.#labels = { ...options.labels };
    this.#outputDrainMs = options.outputDrainMs ?? DEFAULT_OUTPUT_DRAIN_MS;
    this.#errorContext = { daemon: describeDaemon(options.docker), image: options.image };
  }

  /** Checks that the daemon answers and the runner image is present. */
  async probe(): Promise<RunnerProbe> {
    try {
      await this.#docker.ping();
      await this.#docker.getImage(this.#image).inspect();
      return { ok: true };
    } catch (err) {
      return { ok: false, reason: translateDockerError(err, this.#errorContext).reason };
    }
  }

  /** Runs one command in a fresh container; see the module comment for its life. */
  async run(spec: RunSpec): Promise<RunResult> {
    const calledAt = performance.now();
    const cwd = resolveCwd(spec.cwd);
    // A missing working directory would be created by the daemon, as root, in the workspace.
    await requireCwdDirectory(spec.workspaceDir, cwd);
    const env = containerEnv(spec.env, spec.egress);
    const { stdout, stderr } = createCommandOutput(spec.outputLimitBytes, spec.onOutput);
    // Duration and the time limit count from the container's start: the daemon's own
    // time to create a container (seconds on a loaded host) is not charged to the command.
    let startedAt: number | null = null;
    let endedAt: number | null = null;
    const finish = (fields: Partial<RunResult>): RunResult => ({
      exitCode: null,
      signal: null,
      timedOut: false,
      cancelled: false,
      oomKilled: false,
      ...fields,
      stdout: stdout.bytes(),
      stderr: stderr.bytes(),
      stdoutTruncated: stdout.truncated,
      stderrTruncated: stderr.truncated,
      durationMs: Math.round((endedAt ?? performance.now()) - (startedAt ?? calledAt)),
    });
    if (spec.signal?.aborted) return finish({ cancelled: true });

    let ending: Ending = null;
    let container: Dockerode.Container | null = null;
    let killSent = false;
    const kill = (): void => {
      if (container === null || startedAt === null) return; // not running yet: checked after start
      if (killSent) return;
      killSent = true;
      // A failure (404/409) means the container already stopped or is going away.
      container.kill({ signal: 'SIGKILL' }).catch(() => {});
    };
    const end = (why: Exclude<Ending, null>): void => {
      if (ending !== null) return;
      ending = why;
      kill();
    };
    // Cancel works in every phase; the timer is armed when the container starts.
    const onAbort = (): void => end('cancel');
    spec.signal?.addEventListener('abort', onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;

    const hasStdin = spec.stdin !== undefined;
    let attach: NodeJS.ReadWriteStream | null = null;
    let failed = false;
    try {
      const entrypoint = await this.#call(() => this.#imageEntrypoint());
      container = await this.#call(() =>
        this.#docker.createContainer(
          this.#createOptions(spec, posix.join(CONTAINER_WORKSPACE, cwd), env, entrypoint),
        ),
      );
      // Attach before start, so the first bytes of output are not lost.
      const attached = await this.#call(() =>
        container!.attach({
          stream: true,
          stdin: hasStdin,
          stdout: true,
          stderr: true,
          hijack: true,
        }),
      );
      attach = attached;
      // The connection resets when the container is killed; its end is the end of output.
      attached.on('error', () => {});
      const streamEnded = drained(attached);
      this.#docker.modem.demuxStream(attached, stdout.sink(), stderr.sink());
      if (ending !== null) return finish(endedFields(ending, false));

      timer = setTimeout(() => end('timeout'), spec.timeoutMs);
      await this.#call(() => container!.start());
      startedAt = performance.now();
      if (ending !== null) kill();
      if (hasStdin) writeStdin(attached, spec.stdin!);

      const waited = (await this.#call(() => container!.wait())) as { StatusCode?: unknown };
      endedAt = performance.now();
      const statusCode = typeof waited.StatusCode === 'number' ? waited.StatusCode : null;
      // The command has ended: a limit passing while the last output drains is no timeout.
      const endedBy: Ending = ending;
      clearTimeout(timer);
      await Promise.race([streamEnded, delay(this.#outputDrainMs)]);
      const info = await this.#call(() => container!.inspect());
      const oomKilled = info.State.OOMKilled === true;

      if (endedBy !== null) return finish({ ...endedFields(endedBy, true), oomKilled });
      // The container's first process (the shell) killed by the OOM killer exits 137
      // (128 + SIGKILL): report it as a process runner would, killed by a signal.
      if (oomKilled && statusCode === 137) return finish({ signal: 'SIGKILL', oomKilled });
      return finish({ exitCode: statusCode, oomKilled });
    } catch (err) {
      failed = true;
      throw err;
    } finally {
      clearTimeout(timer);
      spec.signal?.removeEventListener('abort', onAbort);
      attach?.removeAllListeners('data');
      (attach as { destroy?: () => void } | null)?.destroy?.();
      // A failed removal is reported unless it would hide the error that ended the run.
      if (container !== null)
        await this.#remove(container).catch((err: unknown) => {
          if (!failed) throw err;
        });
    }
  }

  /** Runs one daemon call, translating its failure through the Docker error table. */
  async #call<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      throw dockerWorkbenchError(err, this.#errorContext);
    }
  }

  /**
   * The programs the runner image declares with {@link PROGRAMS_LABEL}, in its order,
   * duplicates dropped; `[]` when it declares none. Which of them may run is the
   * allowlist's decision (it never admits a shell, say). Rejects when the image cannot
   * be read.
   */
  async providedPrograms(): Promise<string[]> {
    const declared = (await this.#call(() => this.#imageLabels()))[PROGRAMS_LABEL] ?? '';
    return [...new Set(declared.split(/\s+/).filter((name) => name !== ''))];
  }

  /** The runner image's labels, read once; a failed read is tried again next time. */
  #imageLabels(): Promise<Readonly<Record<string, string>>> {
    this.#labelsRead ??= this.#docker
      .getImage(this.#image)
      .inspect()
      .then((info) => ({ ...info.Config?.Labels }));
    // The image may be pulled meanwhile.
    this.#labelsRead.catch(() => {
      this.#labelsRead = null;
    });
    return this.#labelsRead;
  }

  /** `[init]` when the image names one with {@link INIT_LABEL}, else `[]`. */
  async #imageEntrypoint(): Promise<string[]> {
    const init = (await this.#imageLabels())[INIT_LABEL];
    return init !== undefined && posix.isAbsolute(init) ? [init] : [];
  }

  #createOptions(
    spec: RunSpec,
    workingDir: string,
    env: string[],
    entrypoint: string[],
  ): Dockerode.ContainerCreateOptions {
    const hasStdin = spec.stdin !== undefined;
    const memory = Math.max(
      spec.memoryLimitBytes ?? this.#defaultMemoryLimitBytes,
      MIN_MEMORY_LIMIT_BYTES,
    );
    return {
      Image: this.#image,
      // With egress, the bridge to the run's proxy socket starts first (egress-bridge.ts).
      Cmd: spec.egress ? bridgedCommand(spec.command) : ['/bin/sh', '-c', spec.command],
      // The image's own init, or none: never another entrypoint of the image's.
      Entrypoint: entrypoint,
      User: `${SANDBOX_UID}:${SANDBOX_UID}`,
      WorkingDir: workingDir,
      Env: env,
      Hostname: 'sandbox',
      Labels: { ...this.#labels, [SANDBOX_LABEL]: 'docker', [COMMAND_LABEL]: randomUUID() },
      AttachStdin: hasStdin,
      AttachStdout: true,
      AttachStderr: true,
      OpenStdin: hasStdin,
      StdinOnce: hasStdin,
      Tty: false,
      NetworkDisabled: true,
      HostConfig: {
        NetworkMode: 'none',
        CapDrop: ['ALL'],
        // No `seccomp=` option: the daemon's default seccomp profile applies.
        SecurityOpt: ['no-new-privileges'],
        ReadonlyRootfs: true,
        Tmpfs: {
          '/tmp': `rw,nosuid,nodev,size=${this.#tmpSizeBytes}`,
          '/var/tmp': `rw,nosuid,nodev,size=${this.#tmpSizeBytes}`,
        },
        Memory: memory,
        MemorySwap: memory,
        PidsLimit: spec.pidsLimit ?? this.#defaultPidsLimit,
        NanoCpus: this.#nanoCpus,
        Binds: [
          `${resolve(spec.workspaceDir)}:${CONTAINER_WORKSPACE}:rw`,
          ...(spec.egress
            ? [
                `${resolve(spec.egress.socketPath)}:${EGRESS_SOCKET_PATH}:rw`,
                `${resolve(spec.egress.caBundlePath)}:${EGRESS_CA_BUNDLE_PATH}:ro`,
                ...(spec.egress.cacheDir
                  ? [`${resolve(spec.egress.cacheDir)}:${EGRESS_CACHE_PATH}:rw`]
                  : []),
              ]
            : []),
        ],
        AutoRemove: false,
        // Output reaches the runner through the attach stream only; the daemon keeps
        // no copy on disk (a flood would fill it, and output may hold secrets).
        LogConfig: { Type: 'none', Config: {} },
        Privileged: false,
      },
    };
  }

  /** Force-removes a container; one that is already gone is fine. */
  async #remove(container: Dockerode.Container): Promise<void> {
    try {
      await container.remove({ force: true, v: true });
    } catch (err) {
      const status = dockerStatus(err);
      // 404: already gone. 409: removal already in progress.
      if (status === 404 || status === 409) return;
      throw dockerWorkbenchError(err, this.#errorContext);
    }
  }
}

/** The result fields of a command the runner ended; `killed` when it had started. */
function endedFields(ending: Exclude<Ending, null>, killed: boolean): Partial<RunResult> {
  return {
    signal: killed ? 'SIGKILL' : null,
    timedOut: ending === 'timeout',
    cancelled: ending === 'cancel',
  };
}

/**
 * The container's environment: a fixed base (as in the bwrap backend) plus the agent's
 * own entries, as `NAME=value` strings. The node's environment is never an input.
 */
export function containerEnv(
  agentEnv: Record<string, string> | undefined,
  egress?: SandboxEgress,
): string[] {
  const env = {
    ...commandEnv({ PATH: SANDBOX_PATH, HOME: '/tmp', LANG: 'C.UTF-8' }, agentEnv),
    // Over the agent's own entries: a command cannot point its proxy elsewhere.
    ...(egress ? egressEnvironment({ cache: egress.cacheDir !== undefined }) : {}),
  };
  return Object.entries(env).map(([name, value]) => `${name}=${value}`);
}

/** Writes stdin and half-closes the connection, which ends the command's input. */
function writeStdin(attach: NodeJS.ReadWriteStream, stdin: string | Uint8Array): void {
  // A command that exits without reading makes the write fail: the stream's error
  // listener absorbs that, it is not an error of the run.
  attach.write(typeof stdin === 'string' ? Buffer.from(stdin) : stdin);
  attach.end();
}

/** Resolves when the attach stream has delivered all output (or failed). */
function drained(attach: NodeJS.ReadWriteStream): Promise<void> {
  return new Promise((done) => {
    attach.once('end', done);
    attach.once('close', done);
    attach.once('error', () => done()); // a reset connection ends the output too
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms).unref());
}
