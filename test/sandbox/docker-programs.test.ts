import t from 'tap';
import { WorkbenchError } from '../../src/contract/errors.js';
import { DockerRunner } from '../../src/sandbox/docker/index.js';
import { connectTestDocker, TEST_RUNNER_IMAGE } from '../support/docker.js';

/**
 * The docker runner reads the programs its image declares (`memql.runner.programs`)
 * from the image itself, on the real daemon: the locally built `runner` image declares
 * the document tools; an image that declares none adds none.
 */

const docker = await connectTestDocker();

t.test('the runner image declares LibreOffice, Poppler and ImageMagick', async (t) => {
  const programs = await new DockerRunner({ docker, image: TEST_RUNNER_IMAGE }).providedPrograms();
  for (const name of ['soffice', 'pdftoppm', 'pdftotext', 'convert', 'identify']) {
    t.ok(programs.includes(name), name);
  }
  t.equal(new Set(programs).size, programs.length, 'each once');
});

t.test('an image without the label adds nothing; a missing one is no_sandbox', async (t) => {
  const base = (await docker.listImages()).find((i) =>
    (i.RepoTags ?? []).some((tag) => tag.startsWith('memql/ci-base:')),
  );
  t.ok(base, 'the CI base image is present');
  const plain = new DockerRunner({ docker, image: base!.RepoTags![0]! });
  t.same(await plain.providedPrograms(), []);
  const missing = new DockerRunner({ docker, image: 'memql/no-such-image:none' });
  const err = await missing.providedPrograms().catch((e: unknown) => e);
  t.ok(err instanceof WorkbenchError);
  t.equal((err as WorkbenchError).code, 'no_sandbox');
  t.match((err as Error).message, 'MEMQL_RUNNER_IMAGE');
});
