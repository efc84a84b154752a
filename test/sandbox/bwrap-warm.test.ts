import { randomBytes } from 'node:crypto';
import { chown, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import t from 'tap';
import { BwrapRunner } from '../../src/sandbox/bwrap/index.js';
import { parseCgroupMembership } from '../../src/sandbox/cgroups/index.js';
import { type RunSpec, SANDBOX_UID } from '../../src/sandbox/runner.js';
import {
  killAll,
  leftovers,
  makeWorkspace,
  markedSleep,
  processesMatching,
  sleepStarted,
} from './sandbox-support.js';

/**
 * Warm sandboxes (`bwrap-session.ts`) with real bubblewrap, real cgroups and the real
 * agent: commands that share a `reuse` key run one after another in one sandbox, and
 * each still gets what a sandbox of its own gives (no secret, no network, uid 10001,
 * its limits, a clean /tmp, nothing of an earlier command left running). A time limit,
 * a cancel or a sandbox that cannot be put back ends it. A missing bwrap or perl fails;
 * never a skip.
 */

const MiB = 1024 * 1024;
const GROUP = `memql-test-${process.pid}`;
const runner = new BwrapRunner({ cgroups: { groupName: GROUP } });
t.teardown(() => runner.close());

const canary = `canary-${randomBytes(12).toString('hex')}`;
process.env.MEMQL_TEST_CANARY = canary;

function spec(workspaceDir: string, command: string, extra: Partial<RunSpec> = {}): RunSpec {
  return {
    workspaceDir,
    command,
    timeoutMs: 20_000,
    outputLimitBytes: MiB,
    reuse: 'key-1',
    ...extra,
  };
}

/**
 * The sandbox a command ran in, told by the host pids of its chain (whose command lines
 * name the workspace they bind); pids are not reused within a test, unlike namespace
 * inode numbers.
 */
async function sandboxOf(ws: string, extra: Partial<RunSpec> = {}): Promise<string> {
  const r = await runner.run(spec(ws, 'true', extra));
  if (r.exitCode !== 0) throw new Error(`no sandbox: ${r.stderr.toString()}`);
  return (await processesMatching(ws)).sort((a, b) => a - b).join(',');
}

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

t.test('commands with one key share a sandbox; each sees only its own environment', async (t) => {
  const ws = await makeWorkspace(t);
  const first = await sandboxOf(ws);
  const r = await runner.run(
    spec(
      ws,
      `env | sort | tr "\\n" " "; echo; cat /proc/[0-9]*/environ | tr "\\0" "\\n" | cut -d= -f1 | sort -u | tr "\\n" " "`,
      { env: { FOO: 'one' } },
    ),
  );
  const [env, names] = r.stdout.toString().split('\n');
  t.equal(await sandboxOf(ws), first, 'the later commands ran in the first one’s sandbox');
  t.equal(env, 'FOO=one HOME=/tmp LANG=C.UTF-8 PATH=/usr/local/bin:/usr/bin:/bin PWD=/workspace ');
  t.equal(names, 'FOO HOME LANG PATH PWD ', 'no process holds more than the command environment');
  const next = await runner.run(
    spec(
      ws,
      'echo "[$FOO]"; grep -rlF -D skip -f - / --exclude-dir=proc --exclude-dir=usr --exclude=tty; echo "grep=$?"',
      { stdin: `${canary}\n` },
    ),
  );
  t.equal(
    next.stdout.toString(),
    '[]\ngrep=1\n',
    'an earlier command’s variable is gone; no canary',
  );
  t.notMatch(next.stdout.toString() + next.stderr.toString(), canary);
  t.equal(await sandboxOf(ws), first, 'still the same sandbox');
});

t.test('nothing a command started outlives it, though its sandbox stays', async (t) => {
  const ws = await makeWorkspace(t);
  const ns = await sandboxOf(ws);
  const s = markedSleep(60);
  const d = markedSleep(61);
  const r = await runner.run(
    spec(ws, `sleep ${s} >/dev/null 2>&1 & (setsid sleep ${d} >/dev/null 2>&1 &); echo started`),
  );
  t.equal(r.exitCode, 0);
  t.equal(r.stdout.toString(), 'started\n');
  for (const m of [s, d]) {
    const left = await processesMatching(m);
    killAll(left);
    t.same(left, [], `no "sleep ${m}" once the command answered`);
  }
  t.equal(await sandboxOf(ws), ns, 'and the next command still ran in the same sandbox');
});

t.test(
  'each command gets an empty /tmp, /var/tmp and /dev/shm, its own stdin, its own cwd',
  async (t) => {
    const ws = await makeWorkspace(t, ['sub']);
    const a = await runner.run(
      spec(
        ws,
        'mkdir -p /tmp/d/e; echo x > /tmp/d/e/f; chmod 000 /tmp/d; echo y > /dev/shm/g; echo z > /var/tmp/h; echo ok',
        {
          stdin: 'unread',
        },
      ),
    );
    t.equal(a.stdout.toString(), 'ok\n');
    const b = await runner.run(
      spec(ws, 'ls -A /tmp /dev/shm /var/tmp; cat; pwd', { stdin: 'mine', cwd: 'sub' }),
    );
    t.equal(b.stdout.toString(), '/dev/shm:\n\n/tmp:\n\n/var/tmp:\nmine/workspace/sub\n');
    const c = await runner.run(spec(ws, 'cat; echo "[$?]"'));
    t.equal(c.stdout.toString(), '[0]\n', 'no stdin: closed at once');
  },
);

t.test('exit codes, signals, output caps and files as in a sandbox of its own', async (t) => {
  const ws = await makeWorkspace(t);
  const cases: [string, number][] = [
    ['exit 3', 3],
    ['kill -9 $$', 137],
    ['kill -TERM $$', 143],
    ['true', 0],
  ];
  for (const [command, code] of cases) {
    const r = await runner.run(spec(ws, command));
    t.same([r.exitCode, r.signal], [code, null], command);
  }
  const flood = await runner.run(
    spec(ws, 'head -c 20000000 /dev/zero; echo err >&2', { outputLimitBytes: 1000 }),
  );
  t.same([flood.exitCode, flood.stdout.length, flood.stdoutTruncated], [0, 1000, true]);
  t.equal(flood.stderr.toString(), 'err\n');
  const own = await runner.run(spec(ws, 'id -u; touch made; stat -c %u made'));
  t.equal(own.stdout.toString(), `${SANDBOX_UID}\n${SANDBOX_UID}\n`);
  const nonet = await runner.run(
    spec(
      ws,
      'cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "; grep Seccomp: /proc/self/status',
    ),
  );
  t.equal(nonet.stdout.toString(), 'lo\nSeccomp:\t2\n', 'loopback only, under the filter');
});

t.test(
  'a time limit and a cancel end the sandbox and its tree; the next starts anew',
  async (t) => {
    const ws = await makeWorkspace(t);
    const before = await sandboxOf(ws);
    const s = markedSleep(60);
    const timed = await runner.run(spec(ws, `sleep ${s} & sleep 30`, { timeoutMs: 500 }));
    t.same([timed.timedOut, timed.exitCode, timed.signal], [true, null, 'SIGKILL']);
    const afterTimeout = await sandboxOf(ws);
    t.not(afterTimeout, before, 'a new sandbox after the time limit');
    const c = markedSleep(61);
    const ac = new AbortController();
    const running = runner.run(spec(ws, `sleep ${c} & sleep 30`, { signal: ac.signal }));
    await sleepStarted(c);
    ac.abort();
    const cancelled = await running;
    t.same([cancelled.cancelled, cancelled.exitCode], [true, null]);
    for (const m of [s, c]) {
      const left = await leftovers(m);
      killAll(left);
      t.same(left, [], `no "sleep ${m}" left`);
    }
    t.not(await sandboxOf(ws), afterTimeout, 'a new sandbox after the cancel');
  },
);

t.test('limits hold per command, and a contained command does not end the next', async (t) => {
  const ws = await makeWorkspace(t);
  const fork = [
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
  for (let round = 0; round < 2; round++) {
    const res = await runner.run(
      spec(ws, 'python3 -c "$PY"', { env: { PY: fork }, pidsLimit: 64 }),
    );
    t.equal(res.exitCode, 0, res.stderr.toString());
    const forked = Number(res.stdout.toString());
    t.ok(forked > 10 && forked < 64, `round ${round}: forked ${forked} under pidsLimit 64`);
  }
  const hog =
    'chunks = []\nfor i in range(64):\n    chunks.append(bytearray(8 * 1024 * 1024))\nprint("survived")';
  const hogRes = await runner.run(
    spec(ws, 'python3 -c "$PY"', { env: { PY: hog }, memoryLimitBytes: 64 * MiB }),
  );
  t.equal(hogRes.oomKilled, true, 'the memory hog was OOM-killed');
  t.notMatch(hogRes.stdout.toString(), 'survived');
  const after = await runner.run(spec(ws, 'echo fine', { memoryLimitBytes: 64 * MiB }));
  t.same([after.exitCode, after.oomKilled, after.stdout.toString()], [0, false, 'fine\n']);
});

t.test('another key, another directory or a SysV object mean another sandbox', async (t) => {
  const ws = await makeWorkspace(t);
  const a = await sandboxOf(ws);
  t.not(await sandboxOf(ws, { reuse: 'key-2' }), a, 'a new key: the copy changed');
  const b = await sandboxOf(ws, { reuse: 'key-2' });
  t.not(await sandboxOf(ws, { reuse: 'key-2', pidsLimit: 77 }), b, 'other limits');
  const c = await sandboxOf(ws, { reuse: 'key-2', pidsLimit: 77 });
  const ipc = await runner.run(
    spec(ws, 'ipcmk -M 4096 >/dev/null && echo made', {
      reuse: 'key-2',
      pidsLimit: 77,
    }),
  );
  t.match(ipc.stdout.toString(), /made/);
  t.not(await sandboxOf(ws, { reuse: 'key-2', pidsLimit: 77 }), c, 'a SysV object: not reused');
  const d = await sandboxOf(ws, { reuse: 'key-2', pidsLimit: 77 });
  // The directory made anew is another copy, whatever the key says.
  await rm(ws, { recursive: true, force: true });
  await mkdir(ws);
  await chown(ws, SANDBOX_UID, SANDBOX_UID);
  t.not(await sandboxOf(ws, { reuse: 'key-2', pidsLimit: 77 }), d, 'a new directory');
  t.not(await sandboxOf(ws, { reuse: undefined }), d, 'no key: a sandbox of its own');
});

t.test('release and close end warm sandboxes and leave no cgroup', async (t) => {
  const ws = await makeWorkspace(t);
  await runner.run(spec(ws, 'true'));
  // bwrap's command line names the workspace it binds.
  t.ok((await processesMatching(ws)).length > 0, 'a warm sandbox waits');
  await runner.release(ws);
  t.same(await processesMatching(ws), [], 'release ended it');
  const other = await makeWorkspace(t);
  await runner.run(spec(other, 'true'));
  t.ok((await processesMatching(other)).length > 0, 'another waits');
  await runner.close();
  t.same(await processesMatching(other), [], 'close ended it');
  t.same(await cgroupsLeft(), [], 'no cgroup is left');
});
