import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  CFS_PERIOD_US,
  CgroupV1Hierarchy,
  cfsQuotaUs,
  parseCgroupMembership,
} from '../../src/sandbox/cgroups/index.js';
import { eventually } from '../support/mesh.js';

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
  for (const c of ['pids', 'memory', 'cpu']) {
    await mkdir(join(root, c), { recursive: true });
    await writeFile(join(root, c, 'cgroup.procs'), '');
  }
  await mkdir(join(root, 'memory/node/x'), { recursive: true });
  const self = join(root, 'self');
  await writeFile(self, '8:pids:/\n4:memory:/node/x\n2:cpu,cpuacct:/c\n');
  const got = await CgroupV1Hierarchy.open({ root, selfCgroupFile: self });
  t.equal(got.ok, true);
  if (!got.ok) return;
  t.equal(got.hierarchy.cpuUnavailable, null);
  const g = await got.hierarchy.create({ pidsMax: 7, memoryBytes: 1024, cpus: 1.5 });
  t.match(g.name, new RegExp(`^${process.pid}-[0-9a-f]{16}$`), 'named after the creating process');
  t.equal(await readFile(join(root, `pids/memql/${g.name}/pids.max`), 'utf8'), '7\n');
  t.equal(
    await readFile(join(root, `memory/node/x/memql/${g.name}/memory.limit_in_bytes`), 'utf8'),
    '1024\n',
  );
  t.equal(
    await readFile(join(root, `cpu/c/memql/${g.name}/cpu.cfs_period_us`), 'utf8'),
    '100000\n',
  );
  t.equal(await readFile(join(root, `cpu/c/memql/${g.name}/cpu.cfs_quota_us`), 'utf8'), '150000\n');
  t.same(g.procsFiles, [
    join(root, `pids/memql/${g.name}/cgroup.procs`),
    join(root, `memory/node/x/memql/${g.name}/cgroup.procs`),
    join(root, `cpu/c/memql/${g.name}/cgroup.procs`),
  ]);
  const free = await got.hierarchy.create({ pidsMax: 7 });
  t.equal(free.procsFiles.length, 2, "no CPU limit: no cpu group, the node's is shared");
});

t.test('a fake hierarchy without the cpu controller: usable, without a CPU limit', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'memql-cg-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  for (const c of ['pids', 'memory']) {
    await mkdir(join(root, c), { recursive: true });
    await writeFile(join(root, c, 'cgroup.procs'), '');
  }
  const self = join(root, 'self');
  await writeFile(self, '8:pids:/\n4:memory:/\n');
  const got = await CgroupV1Hierarchy.open({ root, selfCgroupFile: self });
  t.equal(got.ok, true);
  if (!got.ok) return;
  t.match(got.hierarchy.cpuUnavailable, /"cpu" is not mounted/);
  const g = await got.hierarchy.create({ cpus: 1 });
  t.equal(g.procsFiles.length, 2, 'pids and memory only');
});

t.test('cfsQuotaUs: CPUs over the 100 ms period, never under the kernel floor', async (t) => {
  t.equal(CFS_PERIOD_US, 100_000);
  t.equal(cfsQuotaUs(1), 100_000);
  t.equal(cfsQuotaUs(0.5), 50_000);
  t.equal(cfsQuotaUs(2.25), 225_000);
  t.equal(cfsQuotaUs(0.001), 1000);
});

t.test('the real hierarchy: join, kill everything, OOM, remove', async (t) => {
  const got = await CgroupV1Hierarchy.open();
  t.equal(got.ok, true, 'cgroup v1 pids and memory are writable here (as root)');
  if (!got.ok) return;
  t.equal(got.hierarchy.cpuUnavailable, null, 'and cpu');
  const g = await got.hierarchy.create({ pidsMax: 16, memoryBytes: 32 * 1024 * 1024, cpus: 1 });
  let removed = false;
  t.teardown(async () => {
    if (!removed) await g.remove();
  });
  t.equal(g.procsFiles.length, 3, 'pids, memory and cpu');
  const [pidsProcs, memProcs, cpuProcs] = g.procsFiles;
  // The shell joins before it forks, as the bwrap launcher does.
  const child = spawn(
    '/bin/sh',
    [
      '-c',
      `echo $$ > ${pidsProcs}; echo $$ > ${memProcs}; echo $$ > ${cpuProcs}; sleep 60 & sleep 60 & wait`,
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await eventually('the shell and both sleeps join', async () => (await g.pids()).length >= 3);
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
  t.notOk(siblings.includes(g.name));
});
