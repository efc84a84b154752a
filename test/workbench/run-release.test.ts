import { access, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import type { Runner } from '../../src/sandbox/runner.js';
import {
  createRun,
  finishRun,
  markRunDeleted,
  openDb,
  provisionWorkspace,
  releaseLiveWorkspace,
} from '../../src/store/index.js';
import { uploadStageDir } from '../../src/workbench/actions/index.js';
import { RunLocks } from '../../src/workbench/lifecycle/index.js';
import { evictUnheld, releaseRun } from '../../src/workbench/run-release.js';
import { WarmCache } from '../../src/workbench/sync/index.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * What a node lets go of when a run ends, on real Postgres and real directories: a
 * running run keeps everything; an ended or deleted one loses its warm sandbox (the
 * runner's `release`), copy and stages, after whatever of it runs; the sweep's
 * backstop evicts copies of runs this node no longer holds, and only those.
 */

const database = await createTestDatabase();
t.teardown(() => database.drop());
const db = await openDb({ kind: 'postgres', url: database.url });
t.teardown(() => db.close());
const root = await mkdtemp(join(tmpdir(), 'memql-release-'));
t.teardown(() => rm(root, { recursive: true, force: true }));

const released: string[] = [];
const runner = { release: async (dir: string) => void released.push(dir) } as unknown as Runner;
const warm = new WarmCache({ workbenchRoot: root, idleTtlMs: 600_000, clock: () => Date.now() });
const locks = new RunLocks();
const deps = {
  db,
  nodeId: 'node-1',
  workbenchRoot: root,
  warm,
  locks,
  runner: { runner, warnings: [] },
  log: pino({ level: 'silent' }),
};
const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** A run held here, with a warm copy and a staged upload. */
async function heldRun(runId: string, nodeId = 'node-1') {
  await createRun(db, { id: runId, ownerUserId: 'owner' });
  await provisionWorkspace(db, { runId, nodeId, ownerUserId: 'owner' });
  await mkdir(join(root, runId), { recursive: true });
  await writeFile(join(root, runId, 'f.txt'), 'x');
  warm.touch(runId);
  await mkdir(uploadStageDir(root, runId), { recursive: true });
  await writeFile(join(uploadStageDir(root, runId), 'upload-1'), 'staged');
}

t.test('a running run keeps everything; an ended or deleted one lets go', async (t) => {
  await heldRun('run-live');
  t.same(await releaseRun(deps, 'run-live'), { released: false, afterRunning: false });
  t.ok(await exists(join(root, 'run-live', 'f.txt')), 'its copy stays');
  t.ok(await exists(uploadStageDir(root, 'run-live')), 'its stage stays');
  t.same(released, [], 'its warm sandbox stays');

  for (const how of ['ended', 'deleted'] as const) {
    const runId = `run-${how}`;
    await heldRun(runId);
    if (how === 'ended') await finishRun(db, runId, 'succeeded');
    else await markRunDeleted(db, runId);
    t.same(await releaseRun(deps, runId), { released: true, afterRunning: false });
    t.notOk(await exists(join(root, runId)), `${how}: the copy is gone`);
    t.notOk(await exists(uploadStageDir(root, runId)), `${how}: the stage is gone`);
    t.ok(released.includes(join(root, runId)), `${how}: the warm sandbox was released`);
    t.notOk(warm.tracked().includes(runId), `${how}: the cache forgot it`);
  }
  t.same(await releaseRun(deps, '../etc'), { released: false, afterRunning: false });
});

t.test('what runs when the run ends goes right after it', async (t) => {
  await heldRun('run-busy');
  let finish: () => void = () => {};
  const command = locks.run('run-busy', () => new Promise<void>((r) => (finish = r)));
  await finishRun(db, 'run-busy', 'failed');
  t.same(await releaseRun(deps, 'run-busy'), { released: true, afterRunning: true });
  t.ok(await exists(join(root, 'run-busy')), 'the copy stays while its command runs');
  finish();
  await command;
  await locks.run('run-busy', async () => {});
  t.notOk(await exists(join(root, 'run-busy')), 'and goes once it ended');
});

t.test('the sweep evicts copies of runs this node no longer holds', async (t) => {
  await heldRun('run-mine');
  await heldRun('run-taken');
  await releaseLiveWorkspace(db, 'run-taken', 'node_lost');
  await provisionWorkspace(db, { runId: 'run-taken', nodeId: 'node-2', ownerUserId: 'owner' });
  // Held here, though the caller's list (read a moment earlier) does not say so yet.
  await heldRun('run-new');
  const evicted = await evictUnheld(deps, new Set(['run-mine']));
  t.same(evicted, ['run-taken']);
  t.notOk(await exists(join(root, 'run-taken')));
  t.ok(await exists(join(root, 'run-mine', 'f.txt')));
  t.ok(await exists(join(root, 'run-new', 'f.txt')), 'its live row, read again, keeps it');
});
