import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import type { Test } from 'tap';
import { readCompose } from './manifest-support.js';

/**
 * The images of `deploy/Dockerfile`, run with the machine's Docker daemon through the
 * `docker` command, as an operator would. `scripts/setup/install-images.sh` builds them (tag
 * `ci`, or `MEMQL_TEST_IMAGE_TAG`); a missing image fails the test, never skips it.
 */
export const IMAGE_TAG = process.env.MEMQL_TEST_IMAGE_TAG ?? 'ci';

/** The four targets of the Dockerfile. */
export type ImageTarget = 'agent' | 'workbench' | 'workbench-runtime' | 'runner';

/** The tag a target is built as. */
export const image = (target: ImageTarget): string => `memql/${target}:${IMAGE_TAG}`;

/** What one `docker` command printed and how it ended. */
export interface DockerOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `docker <args>` and answers its outcome; never throws on a non-zero exit. */
export function docker(args: readonly string[], input?: string): Promise<DockerOutcome> {
  return new Promise((done, fail) => {
    const child = execFile(
      'docker',
      args,
      { maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        if (err && typeof err.code !== 'number') fail(err);
        else done({ code, stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** Runs `docker <args>` and answers its stdout, or throws with its stderr. */
export async function dockerOk(args: readonly string[]): Promise<string> {
  const r = await docker(args);
  if (r.code !== 0) {
    throw new Error(`docker ${args.join(' ')} exited ${r.code}: ${r.stderr.trim()}`);
  }
  return r.stdout;
}

/** Throws, naming the fix, unless the daemon answers and every target's image exists. */
export async function requireImages(targets: readonly ImageTarget[]): Promise<void> {
  const fix =
    'run scripts/setup/install-docker.sh and then scripts/setup/install-images.sh (as root)';
  const info = await docker(['info', '--format', '{{.ServerVersion}}']);
  if (info.code !== 0) throw new Error(`the Docker daemon does not answer: ${fix}`);
  for (const target of targets) {
    const r = await docker(['image', 'inspect', '--format', '{{.Id}}', image(target)]);
    if (r.code !== 0) throw new Error(`image ${image(target)} is missing: ${fix}`);
  }
}

/** A label on every container these tests start, so a teardown finds stragglers. */
export const TEST_LABEL = 'memql.test=deploy';

/** One container started by a test; removed with its volumes at the test's teardown. */
export class TestContainer {
  private constructor(readonly name: string) {}

  /** `docker run -d` with `args` before the image and `command` after it. */
  static async run(
    t: Test,
    options: {
      name: string;
      image: string;
      args?: readonly string[];
      env?: Record<string, string>;
      command?: readonly string[];
    },
  ): Promise<TestContainer> {
    const env = Object.entries(options.env ?? {}).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    await docker(['rm', '-f', '-v', options.name]);
    const container = new TestContainer(options.name);
    t.teardown(() => container.remove());
    await dockerOk([
      'run',
      '-d',
      '--name',
      options.name,
      '--label',
      TEST_LABEL,
      ...(options.args ?? []),
      ...env,
      options.image,
      ...(options.command ?? []),
    ]);
    return container;
  }

  /** `docker exec <name> <command>`. */
  exec(command: readonly string[]): Promise<DockerOutcome> {
    return docker(['exec', this.name, ...command]);
  }

  /** Whether the container is running. */
  async running(): Promise<boolean> {
    const r = await docker(['inspect', '--format', '{{.State.Running}}', this.name]);
    return r.code === 0 && r.stdout.trim() === 'true';
  }

  /** The container's output so far (stdout and stderr). */
  async logs(): Promise<string> {
    const r = await docker(['logs', this.name]);
    return r.stdout + r.stderr;
  }

  /** The JSON log lines the node printed so far. */
  async logLines(): Promise<Record<string, unknown>[]> {
    const lines: Record<string, unknown>[] = [];
    for (const line of (await this.logs()).split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // A line the node did not write as JSON.
      }
    }
    return lines;
  }

  /** The exit code of a stopped container. */
  async exitCode(): Promise<number> {
    return Number(
      (await dockerOk(['inspect', '--format', '{{.State.ExitCode}}', this.name])).trim(),
    );
  }

  kill(): Promise<string> {
    return dockerOk(['kill', this.name]);
  }

  /** `docker stop`: SIGTERM to pid 1, SIGKILL after `timeoutS`. */
  stop(timeoutS: number): Promise<string> {
    return dockerOk(['stop', '-t', String(timeoutS), this.name]);
  }

  start(): Promise<string> {
    return dockerOk(['start', this.name]);
  }

  async remove(): Promise<void> {
    await docker(['rm', '-f', '-v', this.name]);
  }
}

/** A TCP port free on the host now (containers here share the host's network). */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? done(address.port) : fail(new Error('no port')),
      );
    });
  });
}

/**
 * The workbench's privileges as `deploy/compose.yaml` grants them (the compose test
 * holds them equal to the Kubernetes base's), turned into `docker run` flags: the
 * container tests run the workbench with exactly what operators give it.
 */
export function workbenchPrivileges(): string[] {
  const compose = readCompose();
  const service = compose.services['workbench-1'];
  if (!service) throw new Error('deploy/compose.yaml has no workbench-1 service');
  return [
    ...(service.user !== undefined ? ['--user', service.user] : []),
    ...(service.cap_drop ?? []).flatMap((c) => ['--cap-drop', c]),
    ...(service.cap_add ?? []).flatMap((c) => ['--cap-add', c]),
    ...(service.security_opt ?? []).flatMap((o) => ['--security-opt', o]),
    ...(service.tmpfs ?? []).flatMap((p) => ['--tmpfs', p]),
  ];
}
