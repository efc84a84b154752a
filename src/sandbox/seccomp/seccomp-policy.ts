/**
 * The seccomp filter of the bwrap sandbox: defence in depth under the namespaces, the
 * way Codex and Anthropic's sandbox runtime filter syscalls on Linux. Most of these calls
 * already fail inside the sandbox for lack of privileges; the filter keeps them failing
 * if a kernel bug or a capability ever lets one through, and it removes kernel attack
 * surface (keyrings, BPF, perf, io_uring, userfaultfd) that an unprivileged process
 * otherwise reaches.
 *
 * What it does:
 * - a call from another ABI (i386 or x32 on x86_64, 32-bit ARM on aarch64) kills the
 *   process: the filter only knows the native numbers;
 * - every call in {@link SECCOMP_DENIED} fails with `EPERM`;
 * - `clone` with a namespace flag fails with `EPERM`; `clone3` fails with `ENOSYS`
 *   (its flags sit in memory the filter cannot read), so libc falls back to `clone`;
 * - `socket` and `socketpair` fail with `EPERM` for any family but `AF_UNIX`, `AF_INET`
 *   and `AF_INET6` (no netlink, packet, vsock, bluetooth, alg...);
 * - everything else runs.
 *
 * @module
 */

import {
  assemble,
  type BpfItem,
  SECCOMP_DATA,
  SECCOMP_RET,
  type SockFilter,
  to,
} from './seccomp-bpf.js';
import {
  SECCOMP_ARCHES,
  type SeccompArch,
  type SyscallName,
  seccompArchFor,
} from './seccomp-syscalls.js';

/** One group of denied calls, with why. */
export interface SeccompDenial {
  readonly calls: readonly SyscallName[];
  readonly reason: string;
}

/** Calls that always fail with `EPERM`, by group. */
export const SECCOMP_DENIED: readonly SeccompDenial[] = [
  {
    calls: [
      'ptrace',
      'process_vm_readv',
      'process_vm_writev',
      'process_madvise',
      'pidfd_getfd',
      'kcmp',
    ],
    reason: "reading or changing another process's memory, descriptors or state",
  },
  { calls: ['keyctl', 'add_key', 'request_key'], reason: 'kernel keyrings, not namespaced' },
  {
    calls: [
      'bpf',
      'perf_event_open',
      'userfaultfd',
      'io_uring_setup',
      'io_uring_enter',
      'io_uring_register',
    ],
    reason: 'large kernel attack surface no command needs',
  },
  {
    calls: [
      'mount',
      'umount2',
      'pivot_root',
      'move_mount',
      'open_tree',
      'fsopen',
      'fsconfig',
      'fsmount',
      'fspick',
      'mount_setattr',
    ],
    reason: 'changing the mount table',
  },
  {
    calls: ['name_to_handle_at', 'open_by_handle_at'],
    reason: 'file handles open files by inode, around the mount table',
  },
  { calls: ['unshare', 'setns'], reason: 'new or other namespaces' },
  {
    calls: [
      'init_module',
      'finit_module',
      'delete_module',
      'kexec_load',
      'kexec_file_load',
      'reboot',
    ],
    reason: 'kernel modules, another kernel, reboot',
  },
  {
    calls: ['swapon', 'swapoff', 'acct', 'quotactl', 'quotactl_fd', 'syslog', 'lookup_dcookie'],
    reason: 'host administration and the kernel log',
  },
  { calls: ['iopl', 'ioperm'], reason: 'raw I/O ports (x86_64)' },
];

/** `clone` flags that make a namespace; `CLONE_NEWTIME` is clone3/unshare only. */
export const CLONE_NAMESPACE_FLAGS = {
  CLONE_NEWNS: 0x0002_0000,
  CLONE_NEWCGROUP: 0x0200_0000,
  CLONE_NEWUTS: 0x0400_0000,
  CLONE_NEWIPC: 0x0800_0000,
  CLONE_NEWUSER: 0x1000_0000,
  CLONE_NEWPID: 0x2000_0000,
  CLONE_NEWNET: 0x4000_0000,
} as const;

/** Socket families a command may open; every other one fails with `EPERM`. */
export const ALLOWED_SOCKET_FAMILIES = { AF_UNIX: 1, AF_INET: 2, AF_INET6: 10 } as const;

/** The errno values the filter returns (the same on every supported architecture). */
export const SECCOMP_ERRNO = { EPERM: 1, ENOSYS: 38 } as const;

const NAMESPACE_MASK = Object.values(CLONE_NAMESPACE_FLAGS).reduce((a, b) => a | b, 0);

/** The filter for `arch`, as instructions. */
export function seccompProgram(arch: SeccompArch): SockFilter[] {
  const nr = (call: SyscallName): number | undefined => arch.syscalls[call];
  const items: BpfItem[] = [
    { op: 'load', offset: SECCOMP_DATA.arch },
    { op: 'jeq', k: arch.auditArch, jt: 'next', jf: to('kill') },
    { op: 'load', offset: SECCOMP_DATA.nr },
  ];
  if (arch.foreignNrFrom !== undefined) {
    items.push({ op: 'jge', k: arch.foreignNrFrom, jt: to('kill'), jf: 'next' });
  }
  for (const call of SECCOMP_DENIED.flatMap((d) => d.calls)) {
    const n = nr(call);
    if (n !== undefined) items.push({ op: 'jeq', k: n, jt: to('eperm'), jf: 'next' });
  }
  const special: [SyscallName, string][] = [
    ['clone3', 'enosys'],
    ['clone', 'clone'],
    ['socket', 'socket'],
    ['socketpair', 'socket'],
  ];
  for (const [call, label] of special) {
    const n = nr(call);
    if (n !== undefined) items.push({ op: 'jeq', k: n, jt: to(label), jf: 'next' });
  }
  items.push(
    { op: 'ret', k: SECCOMP_RET.allow },
    { op: 'label', name: 'clone' },
    { op: 'load', offset: SECCOMP_DATA.argLow(0) },
    { op: 'jset', k: NAMESPACE_MASK, jt: to('eperm'), jf: to('allow') },
    { op: 'label', name: 'socket' },
    { op: 'load', offset: SECCOMP_DATA.argLow(0) },
  );
  const families = Object.values(ALLOWED_SOCKET_FAMILIES);
  families.forEach((family, i) => {
    const last = i === families.length - 1;
    items.push({ op: 'jeq', k: family, jt: to('allow'), jf: last ? to('eperm') : 'next' });
  });
  items.push(
    { op: 'label', name: 'eperm' },
    { op: 'ret', k: SECCOMP_RET.errno(SECCOMP_ERRNO.EPERM) },
    { op: 'label', name: 'enosys' },
    { op: 'ret', k: SECCOMP_RET.errno(SECCOMP_ERRNO.ENOSYS) },
    { op: 'label', name: 'allow' },
    { op: 'ret', k: SECCOMP_RET.allow },
    { op: 'label', name: 'kill' },
    { op: 'ret', k: SECCOMP_RET.killProcess },
  );
  return assemble(items);
}

/** The filter for this machine, or why there is none. */
export type SeccompFilter =
  | { readonly ok: true; readonly arch: SeccompArch; readonly program: readonly SockFilter[] }
  | { readonly ok: false; readonly reason: string };

/** The filter for Node's `process.arch`, or why there is none (an unknown architecture). */
export function seccompFilterFor(nodeArch: string): SeccompFilter {
  const arch = seccompArchFor(nodeArch);
  if (arch === undefined) {
    return {
      ok: false,
      reason: `no seccomp filter for architecture "${nodeArch}" (supported: ${SECCOMP_ARCHES.map((a) => a.nodeArch).join(', ')})`,
    };
  }
  return { ok: true, arch, program: seccompProgram(arch) };
}
