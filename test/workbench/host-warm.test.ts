import t from 'tap';
import { processesMatching } from '../sandbox/sandbox-support.js';
import { bwrapHost } from '../support/bwrap-host.js';

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
