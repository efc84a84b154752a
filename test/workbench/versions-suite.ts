import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Test } from 'tap';
import { type DispatchResult, userAuthority, type VersionView } from '../../src/contract/index.js';
import type { ObjectStore } from '../../src/objects/index.js';
import { forkRun, manifestAt } from '../../src/store/index.js';
import { bwrapHost } from '../support/bwrap-host.js';
import { parsedEnvelope } from '../support/envelope.js';
import { eventually } from '../support/mesh.js';
import { listKeys, sha256 } from './sync/fixtures.js';

/** The payload of a successful result; fails the test otherwise. */
function ok<T = Record<string, unknown>>(t: Test, r: DispatchResult, what: string): T {
  if (!r.ok) {
    t.fail(`${what}: ${r.errorCode}: ${r.message}`);
    throw new Error(`${what} failed`);
  }
  return r.payload as T;
}

/**
 * A run's workspace history on a real host (bwrap, real Postgres), over the object store
 * `makeStore` gives: versions recorded by each action and command, diff, checkpoints,
 * restore after a destructive command, a restore racing a running command, and a fork
 * that copies no blob. Run once per store by the test files beside it.
 */
export function versionsSuite(t: Test, makeStore: (t: Test) => Promise<ObjectStore>): void {
  t.test('every change is a version; list and diff name what made each', async (t) => {
    const objects = await makeStore(t);
    const { call } = await bwrapHost(t, { nodeId: 'node-v1', runId: 'run-v1', objects });
    const written = ok(t, await call('fs_write', { path: 'a.txt', content: 'one' }), 'fs_write');
    t.equal(written.version, 1, 'the write names its version');
    const ran = ok(
      t,
      await call('exec', { command: 'printf two > b.txt && printf ONE > a.txt' }),
      'exec',
    );
    t.equal(ran.version, 2, 'the command names its version');
    const unchanged = ok(t, await call('exec', { command: 'cat a.txt' }), 'again');
    t.equal(unchanged.version, 2, 'a command that changes nothing names the current version');
    const deleted = ok(t, await call('fs_delete', { path: 'b.txt' }), 'fs_delete');
    t.equal(deleted.version, 3);

    const list = ok<{ versions: VersionView[]; current: number; next: number | null }>(
      t,
      await call('version_list', {}),
      'version_list',
    );
    t.equal(list.current, 3);
    t.same(
      list.versions.map((v) => [v.version, v.source, v.action, v.added, v.changed, v.removed]),
      [
        [3, 'action', 'fs_delete', 0, 0, 1],
        [2, 'command', null, 1, 1, 0],
        [1, 'action', 'fs_write', 1, 0, 0],
      ],
    );
    t.equal(list.versions[1]!.commandId, ran.commandId, 'the command is named');
    const page = ok<{ versions: VersionView[]; next: number | null }>(
      t,
      await call('version_list', { limit: 2 }),
      'page',
    );
    t.same([page.versions.map((v) => v.version), page.next], [[3, 2], 2]);
    const rest = ok<{ versions: VersionView[]; next: number | null }>(
      t,
      await call('version_list', { limit: 2, before: 2 }),
      'next page',
    );
    t.same([rest.versions.map((v) => v.version), rest.next], [[1], null]);

    const diff = ok<Record<string, unknown>>(
      t,
      await call('version_diff', { from: 1, to: 2 }),
      'diff',
    );
    t.match(diff, {
      from: 1,
      to: 2,
      added: 1,
      changed: 1,
      removed: 0,
      next: null,
      entries: [
        {
          path: 'a.txt',
          change: 'changed',
          from: { size: 3, hash: sha256('one') },
          to: { size: 3, hash: sha256('ONE') },
        },
        { path: 'b.txt', change: 'added', from: null, to: { size: 3, hash: sha256('two') } },
      ],
    });
    const toNow = ok<Record<string, unknown>>(t, await call('version_diff', { from: 2 }), 'diff');
    t.match(toNow, { to: 3, removed: 1, entries: [{ path: 'b.txt', change: 'removed' }] });
    const missing = await call('version_diff', { from: 1, to: 9 });
    t.match(missing, { ok: false, errorCode: 'version_not_found' });
  });

  t.test('a restore after a destructive command brings every file back', async (t) => {
    const objects = await makeStore(t);
    const { call, dir } = await bwrapHost(t, { nodeId: 'node-v2', runId: 'run-v2', objects });
    const files = new Map<string, Buffer>();
    for (let i = 0; i < 40; i++) {
      const path = `src/d${i % 5}/f${i}.${i % 3 === 0 ? 'bin' : 'txt'}`;
      const bytes = i % 3 === 0 ? randomBytes(200 + i * 50) : Buffer.from(`file ${i}\n`.repeat(i));
      files.set(path, bytes);
      ok(
        t,
        await call('fs_write', {
          path,
          content: bytes.toString('base64'),
          encoding: 'base64',
          ...(i === 7 ? { mode: '755' } : {}),
        }),
        path,
      );
    }
    const before = ok<{ current: number }>(t, await call('version_list', {}), 'list').current;
    ok(t, await call('version_checkpoint', { label: 'good' }), 'checkpoint');
    const broke = ok(
      t,
      await call('exec', { command: 'rm -rf src && mkdir -p src/d1 && echo junk > src/d1' }),
      'destroy',
    );
    // `echo junk > src/d1` fails on the directory; src/d1 is empty and nothing else is left.
    t.equal(broke.version, before + 1, 'the destruction is a version too');
    const restored = ok<Record<string, unknown>>(
      t,
      await call('version_restore', { to: 'good' }),
      'restore',
    );
    t.match(restored, { version: before + 2, restoredFrom: before, added: 40, removed: 0 });
    for (const [path, bytes] of files) {
      t.ok((await readFile(join(dir, path))).equals(bytes), `${path} back on disk`);
      const read = ok<{ content: string }>(
        t,
        await call('fs_read', { path, encoding: 'base64' }),
        'read',
      );
      t.ok(Buffer.from(read.content, 'base64').equals(bytes), `${path} read back`);
    }
    const mode = await call('exec', { command: 'stat -c %a src/d2/f7.txt' });
    t.match(mode, { ok: true, payload: { stdout: '755\n' } }, 'its mode too');
    const list = ok<{ versions: VersionView[] }>(t, await call('version_list', {}), 'list');
    t.match(list.versions.slice(0, 3), [
      { version: before + 2, source: 'restore', restoredFrom: before },
      { version: before + 1, source: 'command' },
      { version: before, label: 'good' },
    ]);
    // Undone by restoring the destroyed version: the later versions stay restorable.
    ok(t, await call('version_restore', { to: before + 1 }), 'undo');
    // Empty directories are not durable: the destroyed version has no file at all.
    t.match(
      await call('exec', { command: 'find . -type f | wc -l' }),
      { ok: true, payload: { stdout: '0\n' } },
      'the destroyed state again',
    );
    const again = ok<Record<string, unknown>>(
      t,
      await call('version_restore', { to: before }),
      'restore',
    );
    t.match(again, { restoredFrom: before, added: 40 });

    t.match(await call('version_checkpoint', { label: 'good', version: 1 }), {
      ok: false,
      errorCode: 'label_in_use',
    });
    t.match(await call('version_restore', { to: 'nope' }), {
      ok: false,
      errorCode: 'version_not_found',
    });
    t.match(await call('version_checkpoint', { label: 'good', remove: true }), {
      ok: true,
      payload: { removed: true, version: { version: before, label: null } },
    });
  });

  t.test('a restore racing a running command loses no acknowledged write', async (t) => {
    const objects = await makeStore(t);
    const { call, db } = await bwrapHost(t, { nodeId: 'node-v3', runId: 'run-v3', objects });
    ok(t, await call('fs_write', { path: 'base.txt', content: 'base' }), 'base');
    // The command holds the run while it runs; the restore, sent meanwhile, goes after it.
    const running = call('exec', {
      command: 'printf started > started.txt; sleep 1; printf kept > race.txt',
    });
    await eventually('the command running', async () => {
      const rows = await db.query<{ status: string }>(
        `select status from workspace_command where run_id = 'run-v3'`,
      );
      return rows[0]?.status === 'running';
    });
    const restore = call('version_restore', { to: 1 });
    const [command, restored] = await Promise.all([running, restore]);
    const ran = ok(t, command, 'command');
    const back = ok<{ version: number; restoredFrom: number }>(t, restored, 'restore');
    t.ok(back.version > (ran.version as number), 'the restore came after the command');
    const kept = await manifestAt(db, 'run-v3', ran.version as number);
    t.same(
      kept.map((f) => f.path),
      ['base.txt', 'race.txt', 'started.txt'],
      "the command's files are in its version",
    );
    const list = ok<{ versions: VersionView[] }>(t, await call('version_list', {}), 'list');
    t.ok(
      list.versions.some((v) => v.version === ran.version),
      "the command's version is still listed",
    );
    t.match(await call('fs_read', { path: 'race.txt' }), {
      ok: false,
      errorCode: 'not_found',
    });
    ok(t, await call('version_restore', { to: ran.version as number }), 'and it comes back');
    t.match(await call('fs_read', { path: 'race.txt' }), {
      ok: true,
      payload: { content: 'kept' },
    });
  });

  t.test('a fork starts at a version, copies no blob, and goes its own way', async (t) => {
    const objects = await makeStore(t);
    const origin = await bwrapHost(t, { nodeId: 'node-v4', runId: 'run-v4', objects });
    ok(t, await origin.call('fs_write', { path: 'keep.txt', content: 'shared' }), 'w1');
    ok(t, await origin.call('fs_write', { path: 'notes.md', content: 'v1' }), 'w2');
    ok(t, await origin.call('fs_write', { path: 'notes.md', content: 'v2' }), 'w3');
    const keysBefore = await listKeys(objects, '');
    const forked = await forkRun(origin.db, {
      fromRunId: 'run-v4',
      ownerUserId: 'alice',
      version: 2,
      fork: { id: 'run-v4-fork', ownerUserId: 'alice' },
    });
    t.match(forked, { kind: 'forked', files: 2 });
    t.same(await listKeys(objects, ''), keysBefore, 'no object was written');
    // The fork is served like any run: hydrated from its manifest, its blobs the origin's.
    const fork = (action: string, args: Record<string, unknown>) =>
      origin.host.handleDispatch(
        parsedEnvelope({ action, args, runId: 'run-v4-fork', agentId: 'a', taskId: 't' }),
        userAuthority('user:alice'),
      );
    t.match(await fork('fs_read', { path: 'notes.md' }), { ok: true, payload: { content: 'v1' } });
    const renamed = await fork('exec', { command: 'mv keep.txt moved.txt && chmod 600 notes.md' });
    t.match(renamed, { ok: true, payload: { exitCode: 0 } });
    ok(t, await fork('fs_write', { path: 'notes.md', content: 'fork only' }), 'fork write');
    t.match(await origin.call('fs_read', { path: 'notes.md' }), {
      ok: true,
      payload: { content: 'v2' },
    });
    const forkFiles = await manifestAt(origin.db, 'run-v4-fork', 3);
    t.same(
      forkFiles.map((f) => [f.path, f.blobRunId ?? 'own']),
      [
        ['moved.txt', 'run-v4'],
        ['notes.md', 'own'],
      ],
      "a renamed file keeps naming the origin's blob",
    );
    const list = await fork('version_list', {});
    t.match(list, {
      ok: true,
      payload: { versions: [{}, {}, { version: 1, source: 'fork' }] },
    });
    t.match((list.ok ? (list.payload as { versions: VersionView[] }).versions : []).at(-1), {
      forkedFrom: { runId: 'run-v4', version: 2 },
    });
  });
}
