/**
 * Syscall numbers of the calls the seccomp filter names, per architecture. Numbers are
 * the kernel's (`asm/unistd_64.h` on x86_64, `asm-generic/unistd.h` on aarch64); the
 * tests check them against those headers.
 *
 * @module
 */

/** Every syscall the filter looks at. */
export const SECCOMP_SYSCALL_NAMES = [
  'ptrace',
  'process_vm_readv',
  'process_vm_writev',
  'process_madvise',
  'pidfd_getfd',
  'kcmp',
  'keyctl',
  'add_key',
  'request_key',
  'bpf',
  'perf_event_open',
  'userfaultfd',
  'io_uring_setup',
  'io_uring_enter',
  'io_uring_register',
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
  'name_to_handle_at',
  'open_by_handle_at',
  'unshare',
  'setns',
  'clone',
  'clone3',
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
  'quotactl_fd',
  'lookup_dcookie',
  'syslog',
  'socket',
  'socketpair',
] as const;

/** A syscall the filter looks at. */
export type SyscallName = (typeof SECCOMP_SYSCALL_NAMES)[number];

/** One architecture the filter supports. */
export interface SeccompArch {
  /** The kernel's name for it. */
  readonly name: 'x86_64' | 'aarch64';
  /** Node's `process.arch` on it. */
  readonly nodeArch: string;
  /** `AUDIT_ARCH_*`: what `seccomp_data.arch` holds for a native call. */
  readonly auditArch: number;
  /**
   * Syscall numbers at or above this belong to another ABI that shares the native
   * `auditArch` (x32 on x86_64, `__X32_SYSCALL_BIT`).
   */
  readonly foreignNrFrom?: number;
  /** Numbers of the calls; a call missing here does not exist on the architecture. */
  readonly syscalls: Readonly<Partial<Record<SyscallName, number>>>;
}

/** x86_64: the 64-bit ABI only; i386 (`int 0x80`) and x32 calls are foreign. */
const X86_64: SeccompArch = {
  name: 'x86_64',
  nodeArch: 'x64',
  auditArch: 0xc000_003e,
  foreignNrFrom: 0x4000_0000,
  syscalls: {
    ptrace: 101,
    process_vm_readv: 310,
    process_vm_writev: 311,
    process_madvise: 440,
    pidfd_getfd: 438,
    kcmp: 312,
    keyctl: 250,
    add_key: 248,
    request_key: 249,
    bpf: 321,
    perf_event_open: 298,
    userfaultfd: 323,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    mount: 165,
    umount2: 166,
    pivot_root: 155,
    move_mount: 429,
    open_tree: 428,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    mount_setattr: 442,
    name_to_handle_at: 303,
    open_by_handle_at: 304,
    unshare: 272,
    setns: 308,
    clone: 56,
    clone3: 435,
    init_module: 175,
    finit_module: 313,
    delete_module: 176,
    kexec_load: 246,
    kexec_file_load: 320,
    reboot: 169,
    swapon: 167,
    swapoff: 168,
    acct: 163,
    iopl: 172,
    ioperm: 173,
    quotactl: 179,
    quotactl_fd: 443,
    lookup_dcookie: 212,
    syslog: 103,
    socket: 41,
    socketpair: 53,
  },
};

/** aarch64: the 64-bit ABI only; 32-bit ARM (compat) calls are foreign. */
const AARCH64: SeccompArch = {
  name: 'aarch64',
  nodeArch: 'arm64',
  auditArch: 0xc000_00b7,
  syscalls: {
    ptrace: 117,
    process_vm_readv: 270,
    process_vm_writev: 271,
    process_madvise: 440,
    pidfd_getfd: 438,
    kcmp: 272,
    keyctl: 219,
    add_key: 217,
    request_key: 218,
    bpf: 280,
    perf_event_open: 241,
    userfaultfd: 282,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    mount: 40,
    umount2: 39,
    pivot_root: 41,
    move_mount: 429,
    open_tree: 428,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    mount_setattr: 442,
    name_to_handle_at: 264,
    open_by_handle_at: 265,
    unshare: 97,
    setns: 268,
    clone: 220,
    clone3: 435,
    init_module: 105,
    finit_module: 273,
    delete_module: 106,
    kexec_load: 104,
    kexec_file_load: 294,
    reboot: 142,
    swapon: 224,
    swapoff: 225,
    acct: 89,
    quotactl: 60,
    quotactl_fd: 443,
    lookup_dcookie: 18,
    syslog: 116,
    socket: 198,
    socketpair: 199,
  },
};

/** The architectures the filter supports. */
export const SECCOMP_ARCHES: readonly SeccompArch[] = [X86_64, AARCH64];

/** The architecture for Node's `process.arch`, or undefined when the filter has none. */
export function seccompArchFor(nodeArch: string): SeccompArch | undefined {
  return SECCOMP_ARCHES.find((a) => a.nodeArch === nodeArch);
}
