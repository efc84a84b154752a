import { mkdir, mkdtemp, readdir, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import { FsObjectStore } from '../../../src/objects/index.js';
import {
  commitManifestChange,
  createRun,
  enqueueCommand,
  finishRun,
  getArtifactForOwner,
  getLiveWorkspace,
  getManifestHead,
  insertArtifact,
  listAuditEvents,
  listWorkspacesForOwner,
  openDb,
  provisionWorkspace,
} from '../../../src/store/index.js';
import { sweepOnce } from '../../../src/workbench/lifecycle/index.js';
import {
  deleteRunData,
  endRun,
  runObjectPrefix,
} from '../../../src/workbench/lifecycle/run-lifecycle.js';
import { createTestDatabase } from '../../support/postgres.js';

const database = await createTestDatabase();
t.teardown(() => database.drop());
const db = await openDb({ kind: 'postgres', url: database.url });
t.teardown(() => db.close());
const base = await mkdtemp(join(tmpdir(), 'memql-runs-'));
t.teardown(() => rm(base, { recursive: true, force: true }));
const root = join(base, 'wb');
const objects = new FsObjectStore({ baseDir: join(base, 'objects') });
const log = pino({ level: 'silent' });

async function runWithWorkspace(id: string, nodeId = 'node-1') {
  await createRun(db, { id, ownerUserId: 'owner' });
  await provisionWorkspace(db, { runId: id, nodeId, ownerUserId: 'owner' });
  await mkdir(join(root, id), { recursive: true });
  await writeFile(join(root, id, 'f.txt'), 'x');
}

t.test('ending a run releases its workspace and removes the directory, once', async (t) => {
  for (const status of ['succeeded', 'failed', 'cancelled', 'abandoned'] as const) {
    const id = `run-end-${status}`;
    await runWithWorkspace(id);
    const first = await endRun({ db, log, workbenchRoot: root }, id, status);
    t.equal(first.changed, true, status);
    t.equal(first.released?.nodeId, 'node-1');
    t.equal(await getLiveWorkspace(db, id), null);
    const rows = await listWorkspacesForOwner(db, 'owner', { includeReleased: true });
    t.equal(rows.find((w) => w.runId === id)?.releasedReason, `run_${status}`);
    t.notOk((await readdir(root)).includes(id), 'directory removed');
    const again = await endRun({ db, log, workbenchRoot: root }, id, status);
    t.equal(again.changed, false, 'idempotent');
    t.equal(again.released, null);
  }
  await createRun(db, { id: 'run-never', ownerUserId: 'owner' });
  const plain = await endRun({ db, log }, 'run-never', 'succeeded');
  t.equal(plain.released, null, 'a run that never had a workspace is a plain status change');
  await t.rejects(endRun({ db, log }, 'run-never', 'failed'), { code: 'conflict' });
});

t.test(
  'deleting a run removes bytes, manifest, commands, audit events and artifacts; others stay',
  async (t) => {
    for (const id of ['run-del', 'run-keep']) {
      await runWithWorkspace(id);
      await objects.put(`${runObjectPrefix(id)}blobs/abc`, Buffer.from('bytes'));
      await objects.put(`artifacts/${id}`, Buffer.from('artifact'));
      await commitManifestChange(db, {
        runId: id,
        nodeId: 'node-1',
        upserts: [{ path: 'f.txt', hash: 'abc', size: 5, mode: 0o644, mtimeMs: 1 }],
        deletes: [],
      });
      await enqueueCommand(db, {
        id: `cmd-${id}`,
        runId: id,
        ownerUserId: 'owner',
        timeoutMs: 1000,
        request: {},
      });
      await insertArtifact(db, {
        id: `art-${id}`,
        runId: id,
        ownerUserId: 'owner',
        name: 'a',
        contentType: 'text/plain',
        size: 8,
        hash: 'h',
        objectKey: `artifacts/${id}`,
        sourcePath: 'f.txt',
      });
    }
    const counts = await deleteRunData({ db, objects, log, workbenchRoot: root }, 'run-del');
    t.same(counts, { objects: 1, commands: 1, workspaces: 1, artifacts: 1 });
    t.same((await objects.list(runObjectPrefix('run-del'))).items, []);
    t.equal(await objects.head('artifacts/run-del'), null);
    t.equal((await getManifestHead(db, 'run-del')).version, 0);
    t.equal(await getArtifactForOwner(db, 'art-run-del', 'owner'), null);
    const cmds = await db.query("select id from workspace_command where run_id = 'run-del'");
    t.same(cmds, []);
    t.same(
      await db.query("select id from audit_event where run_id = 'run-del'"),
      [],
      'its audit events went with it',
    );
    t.ok(
      (await db.query("select id from audit_event where run_id = 'run-keep'")).length > 0,
      "another run's audit events stay",
    );
    const ws = await listWorkspacesForOwner(db, 'owner', { includeReleased: true });
    t.notOk(
      ws.some((w) => w.runId === 'run-del'),
      'its workspace is no longer listed',
    );

    t.equal(
      (await objects.list(runObjectPrefix('run-keep'))).items.length,
      1,
      'other runs untouched',
    );
    t.ok(await getArtifactForOwner(db, 'art-run-keep', 'owner'));
    t.equal((await getManifestHead(db, 'run-keep')).version, 1);

    const again = await deleteRunData({ db, objects, log }, 'run-del');
    t.same(again, { objects: 0, commands: 0, workspaces: 0, artifacts: 0 }, 'idempotent');
  },
);

t.test('the sweeper finishes what was interrupted', async (t) => {
  // A run that ended without its release (the automation was interrupted).
  await runWithWorkspace('run-missed');
  await finishRun(db, 'run-missed', 'failed');
  // A run past retention that still has data.
  await createRun(db, {
    id: 'run-expired',
    ownerUserId: 'owner',
    retentionExpiresAt: new Date(Date.now() - 1000),
  });
  await provisionWorkspace(db, { runId: 'run-expired', nodeId: 'node-2', ownerUserId: 'owner' });
  await objects.put(`${runObjectPrefix('run-expired')}blobs/x`, Buffer.from('x'));
  // Directories: one live here, one whose row lives on another node (so this node
  // never made it), one not a run id, and one of a run this node held until another
  // took it over.
  await runWithWorkspace('run-live');
  await runWithWorkspace('run-elsewhere', 'node-2');
  await mkdir(join(root, 'lost+found'), { recursive: true });
  await runWithWorkspace('run-moved');
  await db.execute(
    "update workbench_workspace set status = 'released', released_reason = 'node_lost', released_at = now() where run_id = 'run-moved'",
  );
  await provisionWorkspace(db, { runId: 'run-moved', nodeId: 'node-2', ownerUserId: 'owner' });
  // Entries named like runs that are no directories of this node's: a file, a link.
  await writeFile(join(root, 'run-notes'), 'an operator file\n');
  await symlink(join(base, 'objects'), join(root, 'run-link'));
  // A warm copy the cache still tracks, though no live row here claims it.
  await mkdir(join(root, 'run-warm'), { recursive: true });
  // Upload stages: one idle for two hours (a caller that never completed), one fresh.
  const stages = join(root, '.uploads', 'run-live');
  await mkdir(stages, { recursive: true });
  await writeFile(join(stages, 'upload-old'), 'staged');
  const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
  await utimes(join(stages, 'upload-old'), twoHoursAgo, twoHoursAgo);
  await writeFile(join(stages, 'upload-new'), 'staged');
  // A fresh stage of a run whose workspace is no longer held here.
  const movedStages = join(root, '.uploads', 'run-moved');
  await mkdir(movedStages, { recursive: true });
  await writeFile(join(movedStages, 'upload-moved'), 'staged');

  // A command of a run that lives on, finished past retention, and one finished lately.
  await db.execute(
    `insert into workspace_command (id, run_id, owner_user_id, request, timeout_ms, status,
       attempts, queued_at, started_at, finished_at)
     values ('cmd-aged', 'run-missed', 'owner', '{}', 1000, 'completed', 1,
       now() - interval '41 days', now() - interval '41 days', now() - interval '40 days'),
       ('cmd-fresh', 'run-missed', 'owner', '{}', 1000, 'completed', 1, now(), now(), now())`,
  );

  let evictedAt: Date | null = null;
  const now = new Date();
  const report = await sweepOnce(
    {
      db,
      objects,
      nodeId: 'node-1',
      workbenchRoot: root,
      log,
      rowRetention: { commandKeepMs: 30 * 86_400_000, auditKeepMs: 0 },
      evictIdle: async (at) => {
        evictedAt = at;
        return ['warm-1'];
      },
      tracked: () => ['run-warm'],
    },
    now,
  );
  t.same(report, {
    released: 1,
    runsCleaned: 1,
    directoriesRemoved: 2,
    directoriesFailed: 0,
    entriesKept: 3,
    warmEvicted: 1,
    uploadsRemoved: 2,
    versionsPruned: 0,
    blobsCollected: 0,
    commandsDeleted: 1,
    auditEventsDeleted: 0,
  });
  t.same(
    (await db.query("select id from workspace_command where run_id = 'run-missed'")).map(
      (r) => r.id,
    ),
    ['cmd-fresh'],
    'a command past retention goes, a fresh one stays',
  );
  t.same(await readdir(stages), ['upload-new'], 'an idle stage goes, a fresh one stays');
  t.same(await readdir(join(root, '.uploads')), ['run-live'], 'stages of a run not held here go');
  t.equal(await getLiveWorkspace(db, 'run-missed'), null);
  const events = await listAuditEvents(db, { runId: 'run-missed' });
  t.equal(events.at(-1)?.metadata.reason, 'run_failed');
  t.same((await objects.list(runObjectPrefix('run-expired'))).items, []);
  t.same(
    (await readdir(root)).sort(),
    [
      '.uploads',
      'lost+found',
      'run-elsewhere',
      'run-keep',
      'run-link',
      'run-live',
      'run-notes',
      'run-warm',
    ],
    'only directories this node made go: claimed and warm-tracked ones, names that are not run ids, files, links and directories of runs it never held stay',
  );
  t.equal(evictedAt, now);
  const second = await sweepOnce(
    { db, objects, nodeId: 'node-1', workbenchRoot: root, log, tracked: () => ['run-warm'] },
    now,
  );
  t.same(second, {
    released: 0,
    runsCleaned: 0,
    directoriesRemoved: 0,
    directoriesFailed: 0,
    entriesKept: 3,
    warmEvicted: 0,
    uploadsRemoved: 0,
    versionsPruned: 0,
    blobsCollected: 0,
    commandsDeleted: 0,
    auditEventsDeleted: 0,
  });
});
