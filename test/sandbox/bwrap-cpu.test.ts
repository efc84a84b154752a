import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { BwrapRunner } from '../../src/sandbox/bwrap/index.js';
import { parseCgroupMembership } from '../../src/sandbox/cgroups/index.js';
import type { RunSpec } from '../../src/sandbox/runner.js';
import { makeWorkspace } from './sandbox-support.js';

/**
 * The CPU limit of the bwrap sandbox, with real bubblewrap and the real v1 `cpu`
 * controller: the quota is on the command's group while it runs, and a command that
 * keeps several CPUs busy gets no more CPU time than the quota allows.
 */

const GROUP = `memql-test-cpu-${process.pid}`;
const QUARTER = new BwrapRunner({ cgroups: { groupName: GROUP }, cpus: 0.25 });

function spec(workspaceDir: string, command: string, extra: Partial<RunSpec> = {}): RunSpec {
  return { workspaceDir, command, timeoutMs: 60_000, outputLimitBytes: 1 << 20, ...extra };
}

t.test('the probe passes without warnings: the cpu controller is usable here', async (t) => {
  t.same(await QUARTER.probe(), { ok: true });
});

t.test('the quota is set on the cpu group of the running command', async (t) => {
  const ws = await makeWorkspace(t);
  const own = parseCgroupMembership(await readFile('/proc/self/cgroup', 'utf8')).get('cpu') ?? '/';
  const parent = join('/sys/fs/cgroup/cpu', own, GROUP);
  const ac = new AbortController();
  let read: Promise<string[]> | null = null;
  const run = QUARTER.run(
    spec(ws, 'echo running; sleep 60', {
      signal: ac.signal,
      // The sandbox has its own cgroup namespace, so the command cannot name its group;
      // once it runs, its group is the only one under this file's parent.
      onOutput: () => {
        read ??= (async () => {
          const groups = (await readdir(parent, { withFileTypes: true }))
            .filter((e) => e.isDirectory())
            .map((e) => e.name);
          const files = await Promise.all(
            groups.flatMap((g) => [
              readFile(join(parent, g, 'cpu.cfs_period_us'), 'utf8'),
              readFile(join(parent, g, 'cpu.cfs_quota_us'), 'utf8'),
            ]),
          );
          ac.abort();
          return [...groups, ...files.map((f) => f.trim())];
        })();
      },
    }),
  );
  const res = await run;
  t.equal(res.cancelled, true, 'the command ran until the files were read');
  const got = await read!;
  t.equal(got.length, 3, 'one group');
  t.match(got[0], new RegExp(`^${process.pid}-[0-9a-f]{16}$`));
  t.same(got.slice(1), ['100000', '25000'], '0.25 CPU: 25 ms of every 100 ms');
});

t.test('a command spinning on 4 processes gets at most its quota of CPU time', async (t) => {
  const ws = await makeWorkspace(t);
  // Four busy children for about two seconds of wall time; the parent reports their CPU
  // time (user + system) and the wall time it took for all of them to finish.
  const script = [
    'import os, time',
    'start = time.monotonic()',
    'end = start + 2.0',
    'pids = []',
    'for i in range(4):',
    '    pid = os.fork()',
    '    if pid == 0:',
    '        while time.monotonic() < end:',
    '            pass',
    '        os._exit(0)',
    '    pids.append(pid)',
    'for pid in pids:',
    '    os.waitpid(pid, 0)',
    'wall = time.monotonic() - start',
    't = os.times()',
    'print(t.children_user + t.children_system, wall)',
  ].join('\n');
  const res = await QUARTER.run(spec(ws, 'python3 -c "$PY"', { env: { PY: script } }));
  t.equal(res.exitCode, 0, res.stderr.toString());
  const [cpu, wall] = res.stdout.toString().trim().split(' ').map(Number) as [number, number];
  t.ok(cpu > 0, `the children ran (${cpu.toFixed(2)} s of CPU)`);
  // A load elsewhere on the machine can only lower the command's share, never raise it;
  // the allowance covers the quota's granularity (one 100 ms period) and clock ticks.
  const bound = 0.25 * wall * 1.5 + 0.2;
  t.ok(
    cpu <= bound,
    `${cpu.toFixed(2)} s of CPU in ${wall.toFixed(2)} s of wall time: at most ${bound.toFixed(2)} under 0.25 CPU (unlimited, 4 spinners could take up to ${(4 * wall).toFixed(1)} s)`,
  );
});
