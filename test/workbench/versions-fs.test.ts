import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { FsObjectStore } from '../../src/objects/index.js';
import { forkRun, getManifest } from '../../src/store/index.js';
import { hydrateWorkspace } from '../../src/workbench/sync/index.js';
import {
  freshRoot,
  listKeys,
  newRun,
  openTestDb,
  readTree,
  syncAs,
  syncDeps,
  writeTree,
} from './sync/fixtures.js';
import { versionsSuite } from './versions-suite.js';

t.setTimeout(600_000);

versionsSuite(t, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'memql-versions-objects-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return new FsObjectStore({ baseDir: dir });
});

t.test('a fork of a 10,000-file workspace copies no blob and hydrates whole', async (t) => {
  const { db } = await openTestDb(t);
  const objects = new FsObjectStore({ baseDir: join(await freshRoot(t), 'objects') });
  const deps = syncDeps(db, objects);
  const runId = await newRun(db);
  const root = await freshRoot(t);
  const dir = join(root, runId);
  const files: Record<string, string> = {};
  for (let i = 0; i < 10_000; i++) files[`d${Math.floor(i / 100)}/f${i}.txt`] = `file ${i}\n`;
  await writeTree(dir, files);
  const synced = await syncAs(deps, { runId, dir, nodeId: 'node-10k' });
  t.equal(synced.uploaded, 10_000);
  const keys = await listKeys(objects, '');
  const forked = await forkRun(db, {
    fromRunId: runId,
    ownerUserId: 'owner-1',
    version: synced.version,
    fork: { id: `${runId}-fork`, ownerUserId: 'owner-1' },
  });
  t.match(forked, { kind: 'forked', files: 10_000 });
  t.same(await listKeys(objects, ''), keys, 'not one object written');
  const manifest = await getManifest(db, `${runId}-fork`);
  t.ok(
    manifest.files.every((f) => f.blobRunId === runId),
    "every entry names the origin's blob",
  );
  const copy = join(root, 'fork');
  await hydrateWorkspace(deps, { runId: `${runId}-fork`, dir: copy });
  t.same(await readTree(copy), await readTree(dir), 'the fork hydrates byte for byte');
});
