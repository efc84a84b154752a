import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readdir, readFile, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { BwrapRunner } from '../../src/sandbox/bwrap/index.js';
import { parseCgroupMembership } from '../../src/sandbox/cgroups/index.js';
import { makeWorkspace } from './sandbox-support.js';

/**
 * The sweep of leftover per-command cgroups on the real v1 hierarchy: what it removes
 * (empty groups of processes that are gone) and what it never touches (a group with a
 * process in it, a running command's group, another live process's group).
 */

const GROUP = `memql-test-sweep-${process.pid}`;
const CONTROLLERS = ['pids', 'memory', 'cpu'] as const;
const membership = parseCgroupMembership(await readFile('/proc/self/cgroup', 'utf8'));
const parents = CONTROLLERS.map((c) => join('/sys/fs/cgroup', c, membership.get(c) ?? '/', GROUP));

/** Group names under this file's parent, per controller, sorted. */
async function groups(): Promise<string[][]> {
  return Promise.all(
    parents.map(async (p) =>
      (await readdir(p, { withFileTypes: true }).catch(() => []))
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort(),
    ),
  );
}

/** Makes a group of this name under every controller, as a runner would. */
async function makeGroup(name: string): Promise<void> {
  for (const p of parents) await mkdir(join(p, name), { recursive: true });
}

/** The pid of a process that has exited and been reaped. */
async function deadPid(): Promise<number> {
  const child = spawn('/bin/true');
  await once(child, 'exit');
  return child.pid!;
}

t.test('a sweep removes empty groups of gone processes, and only those', async (t) => {
  const ws = await makeWorkspace(t);
  const runner = new BwrapRunner({ cgroups: { groupName: GROUP } });
  t.same(await runner.probe(), { ok: true }, 'cgroups usable here');

  const gone = `${await deadPid()}-0left`;
  const goneBusy = `${await deadPid()}-1busy`;
  const foreign = '1-2live';
  const unnamed = 'operator-made';
  for (const name of [gone, goneBusy, foreign, unnamed]) await makeGroup(name);
  // A sandbox of a killed node that still runs: a process in the gone creator's group.
  const sleeper = spawn('/bin/sh', [
    '-c',
    `${parents.map((p) => `echo $$ > ${join(p, goneBusy, 'cgroup.procs')}`).join('; ')}; echo in; exec sleep 60`,
  ]);
  const sleeperExit = once(sleeper, 'exit');
  t.teardown(async () => {
    sleeper.kill('SIGKILL');
    await sleeperExit;
    for (const name of [goneBusy, foreign, unnamed]) {
      for (const p of parents) await rmdir(join(p, name)).catch(() => {});
    }
    for (const p of parents) await rmdir(p).catch(() => {});
  });
  await once(sleeper.stdout, 'data');

  // A command of this runner, running while the sweep happens.
  const ac = new AbortController();
  let running!: () => void;
  const started = new Promise<void>((resolve) => {
    running = resolve;
  });
  const command = runner.run({
    workspaceDir: ws,
    command: 'echo running; sleep 60',
    timeoutMs: 60_000,
    outputLimitBytes: 4096,
    signal: ac.signal,
    onOutput: () => running(),
  });
  await started;
  const before = await groups();
  const own = before[0]!.find((n) => n.startsWith(`${process.pid}-`));
  t.ok(own, 'the running command has its group');

  t.equal(await runner.sweepLeftovers(), CONTROLLERS.length, 'one group, in each controller');
  const after = await groups();
  for (const names of after) {
    t.same(
      names,
      [foreign, goneBusy, own!, unnamed].sort(),
      'stay: a group with a process, a running command, a live process, a foreign name',
    );
  }

  ac.abort();
  t.equal((await command).cancelled, true);
  sleeper.kill('SIGKILL');
  await sleeperExit;
  // A freshly opened runner (a restarted node) sweeps when it opens the hierarchy.
  t.same(await new BwrapRunner({ cgroups: { groupName: GROUP } }).probe(), { ok: true });
  for (const names of await groups()) {
    t.same(names, [foreign, unnamed], 'the empty group of the gone creator went too');
  }
});

t.test('a group of this process that no command holds is swept too', async (t) => {
  // A removal that failed after its command ended leaves one behind.
  const runner = new BwrapRunner({ cgroups: { groupName: GROUP } });
  t.same(await runner.probe(), { ok: true });
  const mine = `${process.pid}-3mine`;
  await makeGroup(mine);
  t.teardown(async () => {
    for (const p of parents) await rmdir(join(p, mine)).catch(() => {});
  });
  t.equal(await runner.sweepLeftovers(), CONTROLLERS.length);
  for (const names of await groups()) t.notOk(names.includes(mine));
});

t.test('the sweep is a no-op without cgroups', async (t) => {
  t.equal(await new BwrapRunner({ cgroups: false }).sweepLeftovers(), 0);
});
