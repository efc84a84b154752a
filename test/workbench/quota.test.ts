import { readdir } from 'node:fs/promises';
import t from 'tap';
import { getManifest } from '../../src/store/index.js';
import { overQuota, usageAfterWrite, usageOf } from '../../src/workbench/sync/index.js';
import { bwrapHost } from '../support/bwrap-host.js';

/**
 * Per-workspace quotas on a real host: real Postgres, the fs store, real bwrap. A
 * write over the quota is refused before it writes; a command over it is stopped (or
 * refused at its sync) and nothing of it is kept; the workspace goes on working.
 */

const QUOTA = { maxBytes: 1024 * 1024, maxFiles: 20 };

t.test('quota arithmetic', async (t) => {
  const files = new Map([
    ['a', { path: 'a', hash: 'h', size: 100, mode: 0o644, mtimeMs: 1 }],
    ['b', { path: 'b', hash: 'h', size: 50, mode: 0o644, mtimeMs: 1 }],
  ]);
  t.same(usageOf(files.values()), { bytes: 150, files: 2 });
  t.same(usageAfterWrite(files, 'a', 10, false), { bytes: 60, files: 2 }, 'a replace');
  t.same(usageAfterWrite(files, 'a', 10, true), { bytes: 160, files: 2 }, 'an append');
  t.same(usageAfterWrite(files, 'c', 10, false), { bytes: 160, files: 3 }, 'a new file');
  const q = { maxBytes: 100, maxFiles: 2 };
  t.equal(overQuota({ bytes: 100, files: 2 }, q), null, 'at the limit is fine');
  t.equal(overQuota({ bytes: 101, files: 1 }, q), 'bytes');
  t.equal(overQuota({ bytes: 1, files: 3 }, q), 'files');
});

t.test('a real host with a 1 MiB, 20-file quota', async (t) => {
  const { db, dir, call } = await bwrapHost(t, { nodeId: 'node-q', runId: 'run-q', quota: QUOTA });
  const manifestPaths = async () =>
    (await getManifest(db, 'run-q')).files.map((f) => f.path).sort();

  t.match(await call('fs_write', { path: 'keep.txt', content: 'kept' }), { ok: true });

  await t.test('an fs_write over the bytes quota is refused before it writes', async (t) => {
    const big = Buffer.alloc(QUOTA.maxBytes, 1).toString('base64');
    const r = await call('fs_write', { path: 'big.bin', content: big, encoding: 'base64' });
    t.match(r, {
      ok: false,
      errorCode: 'workspace_quota_exceeded',
      payload: { over: 'bytes', quota: QUOTA },
    });
    t.match(r.ok ? '' : r.message, 'MEMQL_WORKSPACE_MAX_BYTES');
    t.notOk((await readdir(dir)).includes('big.bin'), 'nothing was written');
    t.same(await manifestPaths(), ['keep.txt']);
  });

  await t.test(
    'a command that writes past the bytes quota is stopped, and nothing kept',
    async (t) => {
      // It would write forever: only the quota watch can end it before its timeout.
      const r = await call('exec', {
        command:
          'echo one > partial.txt; i=0; while true; do head -c 65536 /dev/zero > f$i.bin; i=$((i+1)); done',
      });
      t.match(r, {
        ok: false,
        errorCode: 'workspace_quota_exceeded',
        payload: { timedOut: false },
      });
      t.match(r.ok ? '' : r.message, 'was stopped');
      t.same(await manifestPaths(), ['keep.txt'], 'none of its files committed');
      t.same(await readdir(dir), ['keep.txt'], 'and the copy is back to what was kept');
    },
  );

  await t.test('a command that makes too many files commits none of them', async (t) => {
    const r = await call('exec', { command: 'for i in $(seq 1 30); do echo $i > n$i.txt; done' });
    t.match(r, { ok: false, errorCode: 'workspace_quota_exceeded' });
    t.same(await manifestPaths(), ['keep.txt']);
    t.same(await readdir(dir), ['keep.txt']);
  });

  await t.test('the workspace goes on working within its quota', async (t) => {
    const r = await call('exec', { command: 'for i in $(seq 1 5); do echo $i > n$i.txt; done' });
    t.match(r, { ok: true, payload: { exitCode: 0 } });
    t.same(await manifestPaths(), ['keep.txt', 'n1.txt', 'n2.txt', 'n3.txt', 'n4.txt', 'n5.txt']);
    t.match(await call('fs_read', { path: 'keep.txt' }), {
      ok: true,
      payload: { content: 'kept' },
    });
  });
});
