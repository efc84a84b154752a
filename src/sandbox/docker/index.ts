/**
 * The Docker runner, for production images: one container per command from the runner
 * image, Docker's errors translated once (`docker-errors.ts`).
 *
 * @module
 */

export {
  type DockerFailureKind,
  dockerStatus,
  dockerWorkbenchError,
  translateDockerError,
} from './docker-errors.js';
export { containerEnv, DockerRunner, PROGRAMS_LABEL } from './docker-runner.js';
