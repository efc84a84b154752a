import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Dockerode from 'dockerode';
import { SANDBOX_UID } from '../../src/sandbox/runner.js';

/**
 * The Docker daemon and image the docker runner's tests use. `scripts/setup/install-docker.sh`
 * installs and starts dockerd and imports the image (no registry is reachable here).
 * A missing daemon or image fails the test run: it is never a skip.
 */
export const TEST_DOCKER_SOCKET = process.env.MEMQL_TEST_DOCKER_SOCKET ?? '/var/run/docker.sock';

/** The runner image built by `scripts/setup/install-images.sh` (deploy/Dockerfile, target `runner`). */
export const TEST_RUNNER_IMAGE = process.env.MEMQL_TEST_DOCKER_IMAGE ?? 'memql/runner:ci';

const HOW_TO_FIX =
  'run scripts/setup/install-docker.sh and scripts/setup/install-images.sh (as root) to start dockerd and build the image';

/**
 * A Dockerode client for the test daemon, after checking that the daemon answers and
 * the test image exists. Throws, naming the fix, when either is missing.
 */
export async function connectTestDocker(): Promise<Dockerode> {
  const docker = new Dockerode({ socketPath: TEST_DOCKER_SOCKET });
  try {
    await docker.ping();
  } catch (err) {
    throw new Error(
      `the Docker daemon does not answer at ${TEST_DOCKER_SOCKET} (${(err as Error).message}): ${HOW_TO_FIX}`,
    );
  }
  try {
    await docker.getImage(TEST_RUNNER_IMAGE).inspect();
  } catch (err) {
    throw new Error(
      `the test image ${TEST_RUNNER_IMAGE} is missing (${(err as Error).message}): ${HOW_TO_FIX}`,
    );
  }
  return docker;
}

/** A temporary workspace directory owned by the sandbox uid, as the workspace layer leaves it. */
export async function makeSandboxWorkspace(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'memql-docker-ws-'));
  await chown(dir, SANDBOX_UID, SANDBOX_UID);
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Every container (running or not) that carries `label=value`. */
export async function containersLabelled(
  docker: Dockerode,
  label: string,
  value: string,
): Promise<Dockerode.ContainerInfo[]> {
  return docker.listContainers({ all: true, filters: { label: [`${label}=${value}`] } });
}

/** Force-removes every container that carries `label=value` (teardown of a test file). */
export async function removeContainersLabelled(
  docker: Dockerode,
  label: string,
  value: string,
): Promise<number> {
  const found = await containersLabelled(docker, label, value);
  await Promise.all(found.map((c) => docker.getContainer(c.Id).remove({ force: true })));
  return found.length;
}
