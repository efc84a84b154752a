import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { CgroupV1Hierarchy, parseCgroupMembership } from '../../src/sandbox/cgroups.js';

t.test('parseCgroupMembership', async (t) => {
  const m = parseCgroupMembership(
    '9:name=systemd:/\n8:pids:/\n4:memory:/a/b\n2:cpu,cpuacct:/c\n0::/v2\n',
  );
  t.equal(m.get('pids'), '/');
  t.equal(m.get('memory'), '/a/b');
  t.equal(m.get('cpuacct'), '/c');
  t.equal(m.get('name=systemd'), '/');
  t.equal(m.has(''), false, 'the v2 line names no controller');
});

t.test('no v1 controllers: unavailable, with the reason', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'memql-cg-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const self = join(root, 'self');
  await writeFile(self, '0::/\n');
  const got = await CgroupV1Hierarchy.open({ root, selfCgroupFile: self });
  t.equal(got.ok, false);
  if (!got.ok) t.match(got.reason, /"pids" is not mounted/);
});

t.test('a fake hierarchy: groups nest under the own cgroup, limits are written', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'memql-cg-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  for (const c of ['pids', 'memory']) {
    await mkdir(join(root, c), { recursive: true });
    await writeFile(join(root, c, 'cgroup.procs'), '');
  }
  await mkdir(join(root, 'memory/node/x'), { recursive: true });
  const self = join(root, 'self');
  await writeFile(self, '8:pids:/\n4:memory:/node/x\n');
  const got = await CgroupV1Hierarchy.open({ root, selfCgroupFile: self });
  t.equal(got.ok, true);
  if (!got.ok) return;
  await t.rejects(got.hierarchy.create('../escape', {}), /invalid cgroup name/);
  const g = await got.hierarchy.create('cmd1', { pidsMax: 7, memoryBytes: 1024 });
  t.equal(await readFile(join(root, 'pids/memql/cmd1/pids.max'), 'utf8'), '7\n');
  t.equal(
    await readFile(join(root, 'memory/node/x/memql/cmd1/memory.limit_in_bytes'), 'utf8'),
    '1024\n',
  );
  t.same(g.procsFiles, [
    join(root, 'pids/memql/cmd1/cgroup.procs'),
    join(root, 'memory/node/x/memql/cmd1/cgroup.procs'),
  ]);
});

t.test('the real hierarchy: join, kill everything, OOM, remove', async (t) => {
  const got = await CgroupV1Hierarchy.open();
  t.equal(got.ok, true, 'cgroup v1 pids and memory are writable here (as root)');
  if (!got.ok) return;
  const g = await got.hierarchy.create(`test-${process.pid}`, {
    pidsMax: 16,
    memoryBytes: 32 * 1024 * 1024,
  });
  let removed = false;
  t.teardown(async () => {
    if (!removed) await g.remove();
  });
  const [pidsProcs, memProcs] = g.procsFiles;
  // The shell joins before it forks, as the bwrap launcher does.
  const child = spawn(
    '/bin/sh',
    ['-c', `echo $$ > ${pidsProcs}; echo $$ > ${memProcs}; sleep 60 & sleep 60 & wait`],
    { stdio: 'ignore' },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  for (let i = 0; i < 100 && (await g.pids()).length < 3; i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  t.equal((await g.pids()).length, 3, 'the shell and both children are in the group');
  t.equal(await g.oomKilled(), false);
  t.equal(await g.killAll(), true);
  await exited;
  t.same(await g.pids(), []);

  const hog = spawn(
    '/bin/sh',
    ['-c', `echo $$ > ${memProcs}; exec /usr/bin/python3 -c "x = bytearray(256 * 1024 * 1024)"`],
    { stdio: 'ignore' },
  );
  const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
    hog.once('exit', (c, s) => resolve([c, s])),
  );
  t.same([code, signal], [null, 'SIGKILL'], 'the kernel killed the hog');
  t.equal(await g.oomKilled(), true);

  const dirs = g.procsFiles.map((f) => f.replace(/\/cgroup\.procs$/, ''));
  await g.remove();
  removed = true;
  for (const dir of dirs) await t.rejects(stat(dir), 'group removed');
  const parent = dirs[0]!.replace(/\/[^/]+$/, '');
  const siblings: string[] = await readdir(parent).catch(() => []);
  t.notOk(siblings.includes(`test-${process.pid}`));
});
