import { readdir, readFile } from 'node:fs/promises';
import t from 'tap';
import { BwrapRunner } from '../../src/sandbox/bwrap/index.js';
import { parseCgroupMembership } from '../../src/sandbox/cgroups/index.js';
import type { RunSpec } from '../../src/sandbox/runner.js';
import { eventually } from '../support/mesh.js';
import {
  killAll,
  leftovers,
  makeWorkspace,
  markedSleep,
  processesMatching,
  sleepStarted,
} from './sandbox-support.js';

/**
 * The limits of the bwrap sandbox with real bubblewrap and real cgroups: time (tree
 * kill), cancel, processes, memory and output. A missing bwrap fails (run
 * scripts/setup/install-sandbox.sh); never a skip.
 */

const MiB = 1024 * 1024;
// A cgroup parent of this test process's own, so runs of other test files (tap runs
// files in parallel) never show up in the leftover check below.
const GROUP = `memql-test-${process.pid}`;
const runner = new BwrapRunner({ cgroups: { groupName: GROUP } });
const noCgroups = new BwrapRunner({ cgroups: false });

function spec(workspaceDir: string, command: string, extra: Partial<RunSpec> = {}): RunSpec {
  return { workspaceDir, command, timeoutMs: 20_000, outputLimitBytes: MiB, ...extra };
}

/** Per-command cgroups left under this file's parents (none once every run returned). */
async function cgroupsLeft(): Promise<string[]> {
  const membership = parseCgroupMembership(await readFile('/proc/self/cgroup', 'utf8'));
  const left: string[] = [];
  for (const controller of ['pids', 'memory']) {
    const own = membership.get(controller) ?? '/';
    const parent = `/sys/fs/cgroup/${controller}${own === '/' ? '' : own}/${GROUP}`;
    const entries = await readdir(parent, { withFileTypes: true }).catch(() => []);
    for (const e of entries) if (e.isDirectory()) left.push(`${parent}/${e.name}`);
  }
  return left;
}

t.test('cgroups are usable on this machine (the limits below depend on them)', async (t) => {
  const probe = await runner.probe();
  t.same(probe, { ok: true }, 'bwrap with per-command cgroups, no warnings');
});

for (const [label, r] of [
  ['with cgroups', runner],
  ['without cgroups', noCgroups],
] as const) {
  t.test(`timeout kills the whole tree, escapes included (${label})`, async (t) => {
    const ws = await makeWorkspace(t);
    const a = markedSleep(60);
    const b = markedSleep(61);
    const c = markedSleep(62);
    const marker = a.split('.')[1]!;
    const res = await r.run(
      spec(
        ws,
        `sleep ${a} & setsid sleep ${b} & (nohup sleep ${c} >/dev/null 2>&1 &); sleep 30; : ${marker}`,
        { timeoutMs: 500 },
      ),
    );
    t.equal(res.timedOut, true);
    t.equal(res.cancelled, false);
    t.equal(res.exitCode, null);
    // timedOut: the limit, not the end of the 30 s sleep, ended the command.
    t.equal(res.signal, 'SIGKILL');
    for (const m of [a, b, c]) {
      const left = await leftovers(m);
      killAll(left);
      t.same(left, [], `no "sleep ${m}" left behind`);
    }
    t.same(await leftovers(marker), [], 'no shell left behind');
  });

  t.test(`a command that exits leaves no background process (${label})`, async (t) => {
    const ws = await makeWorkspace(t);
    const s = markedSleep(60);
    const res = await r.run(spec(ws, `sleep ${s} >/dev/null 2>&1 & echo started`));
    t.equal(res.exitCode, 0);
    t.equal(res.stdout.toString(), 'started\n');
    const left = await leftovers(s);
    killAll(left);
    t.same(left, []);
  });

  t.test(`cancel through the AbortSignal kills the tree (${label})`, async (t) => {
    const ws = await makeWorkspace(t);
    const s = markedSleep(60);
    const ac = new AbortController();
    const running = r.run(spec(ws, `sleep ${s} & sleep 30`, { signal: ac.signal }));
    // Cancel once the background sleep runs, so the kill has a tree to find.
    await sleepStarted(s);
    ac.abort();
    const res = await running;
    t.same([res.cancelled, res.timedOut, res.exitCode], [true, false, null]);
    const left = await leftovers(s);
    killAll(left);
    t.same(left, []);

    const pre = new AbortController();
    pre.abort();
    const early = await r.run(spec(ws, 'sleep 30', { signal: pre.signal }));
    t.equal(early.cancelled, true, 'an already aborted signal cancels at once');
  });
}

t.test(
  'a cancel or timeout while bwrap is still setting up leaves nothing (no cgroups)',
  async (t) => {
    // Killing bwrap before its init armed --die-with-parent would orphan the init.
    const ws = await makeWorkspace(t);
    const s = markedSleep(60);
    const runs: Promise<unknown>[] = [];
    for (let i = 0; i < 24; i++) {
      const ac = new AbortController();
      setTimeout(() => ac.abort(), i % 8);
      runs.push(noCgroups.run(spec(ws, `sleep ${s}`, { signal: ac.signal })));
      runs.push(noCgroups.run(spec(ws, `sleep ${s}`, { timeoutMs: 1 + (i % 8) })));
    }
    const results = (await Promise.all(runs)) as { cancelled: boolean; timedOut: boolean }[];
    t.ok(
      results.every((r) => r.cancelled || r.timedOut),
      'every run was cut short',
    );
    const left = await leftovers(s);
    killAll(left);
    t.same(left, [], 'no sandbox survived');
  },
);

t.test('no per-command cgroup is left after the runs above', async (t) => {
  t.same(await cgroupsLeft(), []);
});

t.test('the process limit holds for the whole tree', async (t) => {
  const ws = await makeWorkspace(t);
  const script = [
    'import os, time',
    'n = 0',
    'for i in range(300):',
    '    try:',
    '        pid = os.fork()',
    '    except OSError:',
    '        break',
    '    if pid == 0:',
    '        time.sleep(30); os._exit(0)',
    '    n += 1',
    'print(n)',
  ].join('\n');
  const res = await runner.run(
    spec(ws, 'python3 -c "$PY"', { env: { PY: script }, pidsLimit: 64 }),
  );
  t.equal(res.exitCode, 0, res.stderr.toString());
  const forked = Number(res.stdout.toString());
  t.ok(forked > 10 && forked < 64, `forked ${forked} children under pidsLimit 64`);
});

t.test('a fork bomb and a memory hog are contained while another command answers', async (t) => {
  const ws = await makeWorkspace(t);
  const bombMarker = markedSleep(1);
  const bomb = [
    'import os',
    'while True:',
    '    try:',
    '        os.fork()',
    '    except OSError:',
    '        pass',
  ].join('\n');
  const hog = [
    'chunks = []',
    'for i in range(64):',
    '    chunks.append(bytearray(8 * 1024 * 1024))  # 512 MiB in all, touched',
    "print('survived')",
  ].join('\n');
  // The bomb runs until the test cancels it (the long limit is only a backstop).
  const stopBomb = new AbortController();
  const bombRun = runner.run(
    spec(ws, `python3 -c "$PY" ${bombMarker}`, {
      env: { PY: bomb },
      pidsLimit: 64,
      timeoutMs: 120_000,
      signal: stopBomb.signal,
    }),
  );
  let bombDone = false;
  void bombRun.then(() => {
    bombDone = true;
  });
  const hogRun = runner.run(
    spec(ws, 'python3 -c "$PY"', { env: { PY: hog }, memoryLimitBytes: 64 * MiB }),
  );
  // Wait until the bomb is forking (its children carry the marker in their command line).
  await eventually(
    'the bomb forks',
    async () => (await processesMatching(`-c\0${bomb}\0${bombMarker}`)).length >= 8,
    30_000,
    25,
  );
  const other = await runner.run(spec(ws, 'echo still-here'));
  t.equal(other.stdout.toString(), 'still-here\n', 'a concurrent command answers');
  t.equal(bombDone, false, 'while the bomb was still running');

  const hogRes = await hogRun;
  t.equal(hogRes.oomKilled, true, 'the memory hog was OOM-killed');
  t.not(hogRes.exitCode, 0);
  t.notMatch(hogRes.stdout.toString(), 'survived');

  stopBomb.abort();
  const bombRes = await bombRun;
  t.equal(bombRes.cancelled, true, 'the bomb ran until it was cancelled');
  const left = await leftovers(bombMarker);
  killAll(left);
  t.same(left, [], 'no bomb process left');
  t.same(await cgroupsLeft(), []);
});

t.test('output beyond the cap is drained, not kept', async (t) => {
  const ws = await makeWorkspace(t);
  let seen = 0;
  const res = await runner.run(
    spec(ws, 'head -c 52428800 /dev/zero; head -c 3000000 /dev/zero >&2; echo done >&2', {
      onOutput: (_stream, chunk) => {
        seen += chunk.length;
      },
    }),
  );
  t.equal(res.exitCode, 0, 'the writer was never blocked');
  t.equal(res.stdout.length, MiB, 'exactly the cap is kept');
  t.equal(res.stderr.length, MiB);
  t.equal(res.stdoutTruncated, true);
  t.equal(res.stderrTruncated, true);
  t.equal(seen, 2 * MiB, 'onOutput saw only kept bytes');

  // The first flood grows the node's heap and buffer arenas once; a node that kept (or
  // queued) output would grow again by the size of the next flood. The bound is half of
  // it: how much of the transient chunks the allocator still holds depends on when the
  // collector last ran, which a busy machine moves; a flood kept whole cannot fit.
  const before = process.memoryUsage().rss;
  const flood = await runner.run(spec(ws, 'head -c 209715200 /dev/zero'));
  const growth = process.memoryUsage().rss - before;
  t.same([flood.exitCode, flood.stdout.length, flood.stdoutTruncated], [0, MiB, true]);
  t.ok(growth < 100 * MiB, `RSS grew by ${(growth / MiB).toFixed(1)} MiB over a 200 MiB flood`);

  const small = await runner.run(spec(ws, 'printf 12345', { outputLimitBytes: 5 }));
  t.same(
    [small.stdout.toString(), small.stdoutTruncated],
    ['12345', false],
    'at the cap: not truncated',
  );
});
