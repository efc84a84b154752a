import t from 'tap';
import { userAuthority } from '../../src/contract/index.js';
import { createRun, getManifest } from '../../src/store/index.js';
import { processesMatching } from '../sandbox/sandbox-support.js';
import { bwrapHost } from '../support/bwrap-host.js';
import { parsedEnvelope } from '../support/envelope.js';

/**
 * Warm sandboxes through a real host (real Postgres, the fs store, real bwrap): a
 * run's commands share one sandbox while only commands change the workspace, and a
 * file the node itself writes (fs_write, fs_delete, a reconcile) ends it, so a command
 * never sees the directory as it was before that write. The sandbox is told by the
 * host pids of its chain, whose command lines name the workspace they bind.
 */

t.test('commands share a sandbox; a write by the node means a fresh one', async (t) => {
  const { call, dir, host } = await bwrapHost(t, { nodeId: 'node-w', runId: 'run-w' });
  const exec = async (command: string) => {
    const r = await call('exec', { command });
    if (!r.ok) throw new Error(`exec: ${r.errorCode}: ${r.message}`);
    return r.payload as { stdout: string; exitCode: number };
  };
  const write = async (path: string, content: string) => {
    const r = await call('fs_write', { path, content });
    if (!r.ok) throw new Error(`fs_write: ${r.errorCode}: ${r.message}`);
  };
  const sandbox = async () => (await processesMatching(dir)).sort((a, b) => a - b).join(',');

  await write('f.txt', 'one');
  t.equal((await exec('cat f.txt; cat g.txt 2>/dev/null; echo .')).stdout, 'one.\n');
  const first = await sandbox();
  t.not(first, '', 'a warm sandbox waits for the run');
  t.equal((await exec('echo made > h.txt; cat f.txt')).stdout, 'one');
  t.equal(await sandbox(), first, 'a command changing files keeps it');
  t.equal((await exec('cat h.txt')).stdout, 'made\n');
  t.equal(await sandbox(), first);

  // The node replaces f.txt (a new inode) and makes g.txt, which the sandbox had looked
  // up and not found: a view kept from before would show the old file and no g.txt.
  await write('f.txt', 'two');
  await write('g.txt', 'new');
  t.equal((await exec('cat f.txt; cat g.txt')).stdout, 'twonew', 'the writes are seen');
  const second = await sandbox();
  t.not(second, first, 'in a sandbox made after them');

  const del = await call('fs_delete', { path: 'g.txt' });
  t.equal(del.ok, true);
  t.equal((await exec('ls')).stdout, 'f.txt\nh.txt\n', 'the delete is seen');
  t.not(await sandbox(), second);

  await host.stop();
  t.same(await processesMatching(dir), [], 'a stopped host leaves no sandbox');
});

t.test('a copy whose manifest was shed reads it back and syncs against it', async (t) => {
  const { call, db, host } = await bwrapHost(t, {
    nodeId: 'node-m',
    runId: 'run-m0',
    warmManifestsMax: 2,
  });
  const runs = ['run-m1', 'run-m2', 'run-m3', 'run-m4'];
  for (const id of runs) await createRun(db, { id, ownerUserId: 'alice' });
  let n = 0;
  const callIn = (runId: string, action: string, args: Record<string, unknown>) =>
    host.handleDispatch(
      parsedEnvelope({ action, args, runId, agentId: 'a', taskId: `m${++n}` }),
      userAuthority('user:alice'),
    );
  t.equal((await call('fs_write', { path: 'a.txt', content: 'zero' })).ok, true);
  for (const runId of runs) {
    t.equal((await callIn(runId, 'fs_write', { path: 'a.txt', content: runId })).ok, true);
  }
  t.equal(host.warm.heldSnapshots, 2, 'five idle copies, two manifests held');
  t.equal(host.warm.get('run-m0'), undefined, "the oldest copy's manifest is shed");
  t.ok(host.warm.markOf('run-m0'), 'its version is kept');

  const r = await call('exec', { command: 'cat a.txt; echo more >> a.txt; echo new > b.txt' });
  t.equal(r.ok && (r.payload as { stdout: string }).stdout, 'zero');
  const manifest = await getManifest(db, 'run-m0');
  t.same(
    manifest.files.map((f) => [f.path, f.size]),
    [
      ['a.txt', 9],
      ['b.txt', 4],
    ],
    'the command changed and added a file; the sync committed both',
  );
  const read = await call('fs_read', { path: 'a.txt' });
  t.equal(read.ok && (read.payload as { content: string }).content, 'zeromore\n');
  t.ok(host.warm.get('run-m0'), 'used again: its manifest is held');
  t.ok(host.warm.heldSnapshots <= 2, 'and the bound still holds');
});
