import t from 'tap';
import {
  ALLOWED_SOCKET_FAMILIES,
  assemble,
  BPF_OP,
  CLONE_NAMESPACE_FLAGS,
  decodeFilter,
  encodeFilter,
  SECCOMP_ARCHES,
  SECCOMP_DENIED,
  SECCOMP_RET,
  type SyscallName,
  seccompFilterFor,
  seccompProgram,
  to,
} from '../../src/sandbox/seccomp/index.js';
import { runFilter } from './seccomp-interpreter.js';

/**
 * The seccomp filter, decided without a kernel: the program is assembled, encoded,
 * decoded and run by an interpreter on synthetic `seccomp_data` for every case.
 * test/sandbox/bwrap-seccomp.test.ts shows the same against the real kernel.
 */

const EPERM = SECCOMP_RET.errno(1);
const ENOSYS = SECCOMP_RET.errno(38);
const ALLOW = SECCOMP_RET.allow;
const KILL = SECCOMP_RET.killProcess;
const SIGCHLD = 17n;
/** What glibc's pthread_create passes (CLONE_VM|FS|FILES|SIGHAND|THREAD|SYSVSEM|SETTLS|PARENT_SETTID|CHILD_CLEARTID). */
const THREAD_FLAGS = 0x3d0f00n;
/** What glibc's fork passes (CLONE_CHILD_SETTID|CLONE_CHILD_CLEARTID|SIGCHLD). */
const FORK_FLAGS = 0x01200000n | SIGCHLD;

const DENIED_BY_THE_ISSUE: readonly SyscallName[] = [
  'ptrace',
  'process_vm_readv',
  'process_vm_writev',
  'keyctl',
  'add_key',
  'request_key',
  'bpf',
  'perf_event_open',
  'userfaultfd',
  'mount',
  'umount2',
  'pivot_root',
  'move_mount',
  'open_tree',
  'fsopen',
  'fsmount',
  'fspick',
  'unshare',
  'setns',
  'init_module',
  'finit_module',
  'delete_module',
  'kexec_load',
  'kexec_file_load',
  'reboot',
  'swapon',
  'swapoff',
  'acct',
  'iopl',
  'ioperm',
  'quotactl',
  'name_to_handle_at',
  'open_by_handle_at',
  'lookup_dcookie',
];

t.test('the denied list covers every call the issue names', async (t) => {
  const denied = new Set(SECCOMP_DENIED.flatMap((d) => d.calls));
  t.same(
    DENIED_BY_THE_ISSUE.filter((c) => !denied.has(c)),
    [],
  );
  t.same(
    SECCOMP_DENIED.filter((d) => d.reason.length < 10).map((d) => d.calls[0]),
    [],
    'every group says why',
  );
});

for (const arch of SECCOMP_ARCHES) {
  t.test(`${arch.name}: what each call gets`, async (t) => {
    const program = decodeFilter(encodeFilter(seccompProgram(arch)));
    const run = (nr: number, args: bigint[] = [], a = arch.auditArch) =>
      runFilter(program, { nr, arch: a, args });
    const nrOf = (call: SyscallName) => arch.syscalls[call];
    const named = new Set(Object.values(arch.syscalls));

    for (const call of SECCOMP_DENIED.flatMap((d) => d.calls)) {
      const n = nrOf(call);
      if (n === undefined) continue; // not on this architecture (iopl, ioperm on aarch64)
      t.equal(run(n, [0n, 0n, 0n]), EPERM, call);
    }

    const clone = nrOf('clone')!;
    for (const [flag, value] of Object.entries(CLONE_NAMESPACE_FLAGS)) {
      t.equal(run(clone, [BigInt(value) | SIGCHLD]), EPERM, `clone ${flag}`);
    }
    t.equal(run(clone, [THREAD_FLAGS]), ALLOW, 'clone of a thread');
    t.equal(run(clone, [FORK_FLAGS]), ALLOW, 'clone of a fork');
    t.equal(run(clone, [(1n << 32n) | FORK_FLAGS]), ALLOW, 'the kernel reads 32 bits of flags');
    t.equal(run(nrOf('clone3')!, [0n, 0n]), ENOSYS, 'clone3: ENOSYS, so libc falls back');

    for (const call of ['socket', 'socketpair'] as const) {
      const n = nrOf(call)!;
      for (const family of Object.values(ALLOWED_SOCKET_FAMILIES)) {
        t.equal(run(n, [BigInt(family), 1n, 0n]), ALLOW, `${call} family ${family}`);
      }
      // AF_UNSPEC, AX25, NETLINK, PACKET, BLUETOOTH, ALG, VSOCK, XDP, and one past the end
      for (const family of [0, 3, 16, 17, 31, 38, 40, 44, 46, 0xffff_ffff]) {
        t.equal(run(n, [BigInt(family), 1n, 0n]), EPERM, `${call} family ${family}`);
      }
      t.equal(run(n, [(1n << 32n) | 16n]), EPERM, `${call}: the int the kernel reads is netlink`);
      t.equal(run(n, [(1n << 32n) | 1n]), ALLOW, `${call}: the int the kernel reads is unix`);
    }

    const ordinary: number[] = [];
    for (let n = 0; n < 512; n++) if (!named.has(n)) ordinary.push(n);
    t.same(
      ordinary.filter((n) => run(n, [0n, 0n]) !== ALLOW),
      [],
      'every other native call runs',
    );

    const others = SECCOMP_ARCHES.filter((a) => a !== arch).map((a) => a.auditArch);
    // i386, 32-bit ARM, none, the other supported architectures
    for (const foreign of [0x4000_0003, 0x4000_0028, 0, ...others]) {
      t.equal(run(0, [], foreign), KILL, `arch 0x${foreign.toString(16)} is killed`);
      t.equal(run(nrOf('ptrace')!, [], foreign), KILL);
    }
    if (arch.foreignNrFrom !== undefined) {
      t.equal(run(arch.foreignNrFrom | 39), KILL, 'an x32 getpid is killed');
      t.equal(run(arch.foreignNrFrom | nrOf('ptrace')!), KILL, 'an x32 ptrace is killed');
      t.equal(run(0xffff_ffff), KILL);
    }
  });

  t.test(`${arch.name}: the program is well formed`, async (t) => {
    const program = seccompProgram(arch);
    t.ok(program.length < 200, `${program.length} instructions`);
    t.same(decodeFilter(encodeFilter(program)), program, 'encodes and decodes');
    t.equal(encodeFilter(program).length, program.length * 8);
    t.equal(program[program.length - 1]!.code, BPF_OP.ret);
    t.same(
      [...new Set(program.filter((i) => i.code === BPF_OP.ldAbsWord).map((i) => i.k))].sort(),
      [0, 16, 4],
      'loads only nr, arch and the low word of the first argument',
    );
    t.same(program.slice(0, 2), [
      { code: BPF_OP.ldAbsWord, jt: 0, jf: 0, k: 4 },
      { code: BPF_OP.jeq, jt: 0, jf: program.length - 3, k: arch.auditArch },
    ]);
    t.same(program[program.length - 1], { code: BPF_OP.ret, jt: 0, jf: 0, k: KILL });
  });
}

t.test('an architecture without a table has no filter, and says so', async (t) => {
  t.match(seccompFilterFor('x64'), { ok: true, arch: { name: 'x86_64' } });
  t.match(seccompFilterFor('arm64'), { ok: true, arch: { name: 'aarch64' } });
  const none = seccompFilterFor('riscv64');
  t.same(none, {
    ok: false,
    reason: 'no seccomp filter for architecture "riscv64" (supported: x64, arm64)',
  });
});

t.test('the assembler refuses what the kernel would refuse', async (t) => {
  const ret = { op: 'ret', k: 0 } as const;
  t.throws(() => assemble([]), /instructions/);
  t.throws(() => assemble([{ op: 'load', offset: 0 }]), /end in ret/);
  t.throws(() => assemble([{ op: 'load', offset: 2 }, ret]), /not a word/);
  t.throws(() => assemble([{ op: 'load', offset: 64 }, ret]), /not a word/);
  t.throws(() => assemble([{ op: 'jeq', k: 1, jt: to('x'), jf: 'next' }, ret]), /no label "x"/);
  t.throws(
    () => assemble([{ op: 'label', name: 'x' }, { op: 'jeq', k: 1, jt: to('x'), jf: 'next' }, ret]),
    /spans -1/,
  );
  t.throws(
    () =>
      assemble([
        { op: 'jeq', k: 1, jt: to('far'), jf: 'next' },
        ...Array.from({ length: 256 }, () => ret),
        { op: 'label', name: 'far' },
        ret,
      ]),
    /spans 256/,
  );
  t.throws(() => assemble([{ op: 'ret', k: 2 ** 32 }]), /not a u32/);
  t.throws(() => assemble([{ op: 'label', name: 'a' }, { op: 'label', name: 'a' }, ret]), /twice/);
  t.same(
    assemble([
      { op: 'jeq', k: 7, jt: to('yes'), jf: 'next' },
      { op: 'ret', k: 1 },
      { op: 'label', name: 'yes' },
      { op: 'ret', k: 2 },
    ]),
    [
      { code: BPF_OP.jeq, jt: 1, jf: 0, k: 7 },
      { code: BPF_OP.ret, jt: 0, jf: 0, k: 1 },
      { code: BPF_OP.ret, jt: 0, jf: 0, k: 2 },
    ],
  );
  t.throws(() => decodeFilter(new Uint8Array(7)), /whole instructions/);
});
