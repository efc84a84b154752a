import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { FsObjectStore } from '../../src/objects/index.js';
import { versionsSuite } from './versions-suite.js';

t.setTimeout(600_000);

versionsSuite(t, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'memql-versions-objects-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return new FsObjectStore({ baseDir: dir });
});
