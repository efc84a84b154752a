import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { FsObjectStore } from '../../../src/objects/index.js';
import { blobCollectorSuite } from './blob-collector-suite.js';
import { openTestDb } from './fixtures.js';

t.setTimeout(600_000);

const { db } = await openTestDb(t);
await blobCollectorSuite(t, db, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'memql-collector-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return new FsObjectStore({ baseDir: dir });
});
