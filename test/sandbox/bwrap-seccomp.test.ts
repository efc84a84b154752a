import t, { type Test } from 'tap';
import { BwrapRunner } from '../../src/sandbox/bwrap/index.js';
import type { RunSpec } from '../../src/sandbox/runner.js';
import { SECCOMP_DENIED, seccompArchFor } from '../../src/sandbox/seccomp/index.js';
import { makeWorkspace } from './sandbox-support.js';

/**
 * The seccomp filter against the real kernel, in real bubblewrap sandboxes: each denied
 * call fails from inside with EPERM (clone3 with ENOSYS), calls from a foreign ABI kill
 * the process, the same calls behave otherwise with the filter off (so the filter is what
 * denies them), and ordinary tools still work under it.
 */

const runner = new BwrapRunner();
const unfiltered = new BwrapRunner({ seccomp: false });
const arch = seccompArchFor(process.arch);

async function run(t: Test, r: BwrapRunner, command: string, extra: Partial<RunSpec> = {}) {
  const ws = await makeWorkspace(t);
  return r.run({
    workspaceDir: ws,
    command,
    timeoutMs: 60_000,
    outputLimitBytes: 1 << 20,
    ...extra,
  });
}

/** [label, syscall number, arguments] for every call the probe script makes. */
function callTable(): [string, number, number[]][] {
  if (arch === undefined) throw new Error(`no seccomp table for ${process.arch}`);
  const nr = (name: keyof typeof arch.syscalls) => arch.syscalls[name]!;
  const table: [string, number, number[]][] = [];
  for (const call of SECCOMP_DENIED.flatMap((d) => d.calls)) {
    // All-zero arguments: harmless for each of them even where nothing denies it
    // (ptrace(0) is PTRACE_TRACEME, unshare(0) changes nothing, setns(0, 0) is stdin).
    if (arch.syscalls[call] !== undefined) table.push([call, nr(call), [0, 0, 0, 0, 0, 0]]);
  }
  const SIGCHLD = 17;
  table.push(
    ['unshare(CLONE_NEWNS|CLONE_NEWUSER)', nr('unshare'), [0x1002_0000]],
    ['clone(CLONE_NEWUSER)', nr('clone'), [0x1000_0000 | SIGCHLD, 0, 0, 0, 0]],
    ['clone(CLONE_NEWNET)', nr('clone'), [0x4000_0000 | SIGCHLD, 0, 0, 0, 0]],
    ['clone(CLONE_NEWNS)', nr('clone'), [0x0002_0000 | SIGCHLD, 0, 0, 0, 0]],
    ['clone3', nr('clone3'), [0, 0]],
    ['socket(AF_NETLINK)', nr('socket'), [16, 3, 0]],
    ['socket(AF_PACKET)', nr('socket'), [17, 3, 0]],
    ['socket(AF_VSOCK)', nr('socket'), [40, 1, 0]],
    ['socket(AF_ALG)', nr('socket'), [38, 5, 0]],
    ['socketpair(AF_NETLINK)', nr('socketpair'), [16, 3, 0, 0]],
  );
  return table;
}

/** Makes each call through libc's syscall() and prints "label errno-name" (or "label OK"). */
function probeScript(calls: [string, number, number[]][]): string {
  return `
import ctypes, errno, json
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
for label, nr, args in json.loads(${JSON.stringify(JSON.stringify(calls))}):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_ulong(a) for a in args])
    e = ctypes.get_errno()
    print(label, errno.errorcode.get(e, e) if r == -1 else 'OK', flush=True)
`;
}

/** Runs the probe script and reads its answers into a map. */
async function probe(t: Test, r: BwrapRunner, calls: [string, number, number[]][]) {
  const res = await run(t, r, 'python3 -', { stdin: probeScript(calls) });
  t.equal(res.exitCode, 0, res.stderr.toString());
  const answers = new Map<string, string>();
  for (const line of res.stdout.toString().trim().split('\n')) {
    const cut = line.lastIndexOf(' ');
    answers.set(line.slice(0, cut), line.slice(cut + 1));
  }
  return answers;
}

t.test('the filter is in force: the probe checks it and /proc says so', async (t) => {
  t.same(await runner.probe(), { ok: true });
  const r = await run(
    t,
    runner,
    'grep -E "^(Seccomp|Seccomp_filters|NoNewPrivs):" /proc/self/status',
  );
  t.equal(r.stdout.toString(), 'NoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\n');
});

t.test('every denied call fails with EPERM from inside, clone3 with ENOSYS', async (t) => {
  const calls = callTable();
  const answers = await probe(t, runner, calls);
  for (const [label] of calls) {
    t.equal(answers.get(label), label === 'clone3' ? 'ENOSYS' : 'EPERM', label);
  }
});

t.test(
  'with the filter off, the same calls are not EPERM: the filter is what denies them',
  async (t) => {
    // ptrace(PTRACE_TRACEME) is left out: it works, and a traced process could stop.
    const calls = callTable().filter(([label]) => label !== 'ptrace');
    const answers = await probe(t, unfiltered, calls);
    for (const label of ['keyctl', 'add_key', 'unshare', 'setns', 'socket(AF_NETLINK)', 'clone3']) {
      t.not(answers.get(label), 'EPERM', label);
      t.ok(answers.has(label), `${label} answered`);
    }
  },
);

t.test('calls from a foreign ABI kill the process', async (t) => {
  t.equal(arch?.name, 'x86_64', 'this machine is x86_64; the i386 and x32 cases below need it');
  const x32 = `python3 -c 'import ctypes; ctypes.CDLL(None).syscall(0x40000000 | 39)'; echo "x32=$?"`;
  // mov eax, 20 (getpid on i386); int 0x80; ret
  const i386 = `python3 -c '
import ctypes, mmap
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(bytes([0xb8, 0x14, 0, 0, 0, 0xcd, 0x80, 0xc3]))
print(ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))())
'; echo "i386=$?"`;
  const r = await run(t, runner, `${x32}; ${i386}`);
  const off = await run(t, unfiltered, i386);
  if (/^i386=139\n$/.test(off.stdout.toString())) {
    // A kernel booted without IA32 emulation answers `int 0x80` with SIGSEGV whatever
    // the filter says: the i386 ABI is out of reach here, and the x32 case still counts.
    t.match(r.stdout.toString(), /^x32=159\ni386=(159|139)\n$/, 'x32 killed by SIGSYS (128 + 31)');
    t.comment('this kernel has no IA32 emulation: int 0x80 faults with or without the filter');
  } else {
    t.match(r.stdout.toString(), /^x32=159\ni386=159\n$/, 'killed by SIGSYS (128 + 31)');
    t.match(off.stdout.toString(), /^\d+\ni386=0\n$/, 'without the filter the i386 call runs');
  }
});

t.test('ordinary tools work under the filter', async (t) => {
  const script = [
    'set -e',
    `python3 -c '
import os, socket, subprocess, threading
t = threading.Thread(target=print, args=("py-thread",)); t.start(); t.join()
print(subprocess.run(["echo", "py-child"], capture_output=True, text=True).stdout.strip())
a, b = socket.socketpair(); a.send(b"x"); print("py-socketpair", b.recv(1).decode())
for family in (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6): socket.socket(family).close()
print("py-sockets")
pid = os.fork()
if pid == 0: os._exit(7)
print("py-fork", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
'`,
    `node -e '
const { execFileSync } = require("child_process");
const { Worker } = require("worker_threads");
console.log(execFileSync("echo", ["node-child"]).toString().trim());
new Worker("require(\\"worker_threads\\").parentPort.postMessage(6 * 7)", { eval: true })
  .on("message", (m) => console.log("node-worker", m));
'`,
    'git init -q repo && cd repo',
    'git config user.email a@example.com && git config user.name agent',
    'echo hello > f && git add f && git commit -qm first && git log --format=%s && cd ..',
    'mkdir -p tree/a && echo deep > tree/a/f && tar czf t.tgz tree && mkdir out',
    'tar xzf t.tgz -C out && cat out/tree/a/f',
    'seq 1 1000 | sort -rn | head -n 1 | tr 0 o',
  ].join('\n');
  const r = await run(t, runner, script);
  t.equal(r.exitCode, 0, r.stderr.toString());
  t.equal(
    r.stdout.toString(),
    [
      'py-thread',
      'py-child',
      'py-socketpair x',
      'py-sockets',
      'py-fork 7',
      'node-child',
      'node-worker 42',
      'first',
      'deep',
      '1ooo',
      '',
    ].join('\n'),
  );
});

t.test(
  'an architecture without a table runs without the filter, and the probe says so',
  async (t) => {
    const other = new BwrapRunner({ arch: 'riscv64' });
    const p = await other.probe();
    t.match(p, { ok: true });
    t.match(p.ok ? p.warnings : [], [
      /no seccomp filter for architecture "riscv64".*without a seccomp filter/,
    ]);
    const r = await run(t, other, 'grep "^Seccomp:" /proc/self/status');
    t.equal(r.stdout.toString(), 'Seccomp:\t0\n');
  },
);
