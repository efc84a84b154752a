import { execFileSync } from 'node:child_process';
import { access, mkdir, readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { type BaseSnapshot, WarmCache } from '../../../src/workbench/sync/index.js';
import { makeDeepTree } from '../../support/deep-tree.js';
import { freshRoot, writeTree } from './fixtures.js';

/** A base snapshot at `version`, with no files. */
const at = (version: number, by: string | null = 'node-a'): BaseSnapshot => ({
  version,
  updatedByNode: by,
  files: new Map(),
});

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

async function cacheWith(t: Test, idleTtlMs: number, runIds: string[]) {
  const root = await freshRoot(t);
  let now = 1_000;
  const cache = new WarmCache({ workbenchRoot: root, idleTtlMs, clock: () => now });
  for (const runId of runIds) await writeTree(join(root, runId), { 'f.txt': runId });
  return {
    root,
    cache,
    setNow: (ms: number) => {
      now = ms;
    },
  };
}

t.test('get, set and invalidate', async (t) => {
  const { cache, setNow } = await cacheWith(t, 60_000, ['r1']);
  t.equal(cache.get('r1'), undefined, 'unknown until set');
  setNow(2_000);
  const base = at(4);
  cache.set('r1', base, 2);
  t.same(cache.get('r1'), { base, generation: 2, lastUsedMs: 2_000 });
  t.equal(cache.get('r1')?.base, base, 'the snapshot itself, not a copy');
  setNow(3_000);
  cache.touch('r1');
  t.equal(cache.get('r1')?.lastUsedMs, 3_000);
  cache.invalidate('r1');
  t.equal(cache.get('r1'), undefined, 'the snapshot is forgotten');
  t.same(cache.tracked(), ['r1'], 'the directory is still tracked');
});

t.test('evictIdle removes directories idle past the TTL, and only those', async (t) => {
  const { root, cache, setNow } = await cacheWith(t, 1_000, ['old', 'recent']);
  setNow(0);
  cache.set('old', at(1), 1);
  setNow(500);
  cache.set('recent', at(1), 1);

  t.same(await cache.evictIdle(1_000), [], 'exactly the TTL is not past it');
  t.same(await cache.evictIdle(1_001), ['old']);
  t.notOk(await exists(join(root, 'old')), 'its directory is gone');
  t.ok(await exists(join(root, 'recent')));
  t.equal(cache.get('old'), undefined);
  t.same(await cache.evictIdle(1_501), ['recent']);
  t.same(cache.tracked(), []);
});

t.test('a directory held by a command is not evicted as idle', async (t) => {
  const { root, cache, setNow } = await cacheWith(t, 1_000, ['busy']);
  cache.begin('busy');
  cache.begin('busy');
  t.same(await cache.evictIdle(1_000_000), []);
  setNow(2_000);
  t.equal(await cache.end('busy'), false);
  t.same(await cache.evictIdle(1_000_000), [], 'one command still holds it');
  await cache.end('busy');
  t.same(await cache.evictIdle(2_500), [], 'idle since 2000');
  t.same(await cache.evictIdle(3_001), ['busy']);
  t.notOk(await exists(join(root, 'busy')));
});

t.test('TTL 0 disables reuse: the directory goes when its command ends', async (t) => {
  const { root, cache } = await cacheWith(t, 0, ['r']);
  cache.begin('r');
  cache.set('r', at(3), 1);
  t.same(await cache.evictIdle(), [], 'not while the command runs');
  t.equal(await cache.end('r'), true);
  t.notOk(await exists(join(root, 'r')));
  t.equal(cache.get('r'), undefined, 'the next command hydrates');
});

t.test('evict removes the directory without following links out of it', async (t) => {
  const { root, cache } = await cacheWith(t, 1_000, ['r']);
  const outside = join(root, 'outside');
  await mkdir(outside);
  await writeTree(outside, { 'keep.txt': 'keep' });
  await symlink(outside, join(root, 'r', 'link'));
  cache.set('r', at(1, null), 1);
  await cache.evict('r');
  t.notOk(await exists(join(root, 'r')));
  t.equal(await readFile(join(outside, 'keep.txt'), 'utf8'), 'keep');
});

t.test('evict removes a tree deeper than PATH_MAX and a FIFO', async (t) => {
  const { root, cache } = await cacheWith(t, 1_000, ['r']);
  makeDeepTree(join(root, 'r'), 45);
  execFileSync('mkfifo', [join(root, 'r', 'pipe')]);
  cache.set('r', at(1, null), 1);
  await cache.evict('r');
  t.notOk(await exists(join(root, 'r')));
});

t.test('a use that begins while an eviction removes the directory waits for it', async (t) => {
  const root = await freshRoot(t);
  await writeTree(join(root, 'r1'), { 'f.txt': 'r1' });
  let letGo!: () => void;
  const held = new Promise<void>((resolve) => {
    letGo = resolve;
  });
  let onEvictCalled!: () => void;
  const evicting = new Promise<void>((resolve) => {
    onEvictCalled = resolve;
  });
  const cache = new WarmCache({
    workbenchRoot: root,
    idleTtlMs: 0,
    clock: () => 1_000,
    // The runner lets its sandbox go first: the removal waits for it.
    onEvict: async () => {
      onEvictCalled();
      await held;
    },
  });
  cache.touch('r1');
  const eviction = cache.evictIdle();
  await evicting;
  cache.begin('r1');
  t.ok(await exists(join(root, 'r1')), 'the directory is still there while the eviction runs');
  const use = cache.settled('r1');
  letGo();
  await use;
  t.notOk(await exists(join(root, 'r1')), 'the use looks only once the removal is done');
  t.same(await eviction, ['r1']);
  await cache.settled('r1');
  t.equal(cache.tracked().includes('r1'), true, 'the new use is tracked');
});

t.test('a negative TTL is refused', async (t) => {
  t.throws(
    () => new WarmCache({ workbenchRoot: '/nowhere', idleTtlMs: -1, clock: Date.now }),
    RangeError,
  );
});

t.test('the stamp changes only when the node writes into the directory', async (t) => {
  const root = await freshRoot(t);
  const evicted: string[] = [];
  const cache = new WarmCache({
    workbenchRoot: root,
    idleTtlMs: 60_000,
    clock: () => 1_000,
    onEvict: async (dir) => {
      evicted.push(dir);
    },
  });
  await writeTree(join(root, 'r1'), { 'f.txt': 'x' });
  const first = cache.stampOf('r1');
  cache.set('r1', at(1), 1);
  cache.begin('r1');
  await cache.end('r1');
  t.equal(cache.stampOf('r1'), first, 'reconciles, syncs and commands leave it');
  cache.wrote('r1');
  const second = cache.stampOf('r1');
  t.not(second, first, 'a write by the node changes it');
  cache.invalidate('r1');
  t.not(cache.stampOf('r1'), second, 'so does forgetting what the directory matches');
  t.not(cache.stampOf('r2'), cache.stampOf('r1'), 'another run has its own');
  await cache.evict('r1');
  t.same(evicted, [join(root, 'r1')], 'eviction lets the view of the directory go first');
  t.not(cache.stampOf('r1'), second, 'a directory made again starts anew');
});

t.test('at most maxManifests snapshots are held; older ones keep their mark', async (t) => {
  const root = await freshRoot(t);
  const cache = new WarmCache({
    workbenchRoot: root,
    idleTtlMs: 60_000,
    maxManifests: 3,
    clock: () => 0,
  });
  const runs = Array.from({ length: 10 }, (_, i) => `r${i}`);
  cache.begin('r0');
  for (const [i, runId] of runs.entries()) cache.set(runId, at(i + 1), 1);
  t.equal(cache.heldSnapshots, 3, 'the bound');
  t.ok(cache.get('r0'), 'a snapshot in use is not shed, though the oldest');
  t.same(cache.tracked().length, 10, 'every directory is still tracked');
  for (const runId of ['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7']) {
    t.equal(cache.get(runId), undefined, `${runId}'s snapshot is shed`);
  }
  t.same(cache.markOf('r2'), { version: 3, updatedByNode: 'node-a', generation: 1 });
  for (const runId of ['r8', 'r9']) t.ok(cache.get(runId), `${runId} is recent`);
  t.equal(cache.markOf('r9'), undefined, 'no mark while the snapshot is held');

  cache.begin('r8');
  cache.begin('r9');
  cache.begin('r1');
  cache.set('r1', at(9), 1);
  t.equal(cache.heldSnapshots, 4, 'over the bound only while every other is in use');
  await cache.end('r0');
  t.equal(cache.heldSnapshots, 3, 'back within it once a command ends');
  t.equal(cache.get('r0'), undefined, 'the oldest not in use went');
  await cache.end('r8');
  await cache.end('r9');
  await cache.end('r1');

  cache.set('r2', at(7), 2);
  t.equal(cache.markOf('r2'), undefined, 'set again: held, no mark');
  t.equal(cache.get('r2')?.base.version, 7);
  t.equal(cache.heldSnapshots, 3);
  t.equal(cache.get('r8'), undefined, 'r8 was the oldest');
  cache.invalidate('r3');
  t.equal(cache.markOf('r3'), undefined, 'an invalidated copy has no mark either');
  await cache.evict('r2');
  t.equal(cache.heldSnapshots, 2, 'an evicted run holds nothing');
  t.throws(
    () => new WarmCache({ workbenchRoot: root, idleTtlMs: 0, maxManifests: 0, clock: () => 0 }),
  );
});
