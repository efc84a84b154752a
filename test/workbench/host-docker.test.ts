import t from 'tap';
import { DockerRunner } from '../../src/sandbox/docker/index.js';
import { connectTestDocker, TEST_RUNNER_IMAGE } from '../support/docker.js';
import { hostSuite } from './host-suite.js';

// A real Docker daemon and the busybox runner image; scripts/setup/install-docker.sh provides both.
const docker = await connectTestDocker();
await hostSuite(t, new DockerRunner({ docker, image: TEST_RUNNER_IMAGE }));
