/**
 * The sandbox's seccomp filter: the syscall table per architecture, the policy (what a
 * command may not call, and with which error), and the classic-BPF program bwrap loads
 * (`--seccomp FD`).
 *
 * @module
 */

export {
  assemble,
  BPF_OP,
  decodeFilter,
  encodeFilter,
  SECCOMP_DATA,
  SECCOMP_RET,
  type SockFilter,
  to,
} from './seccomp-bpf.js';
export {
  ALLOWED_SOCKET_FAMILIES,
  CLONE_NAMESPACE_FLAGS,
  SECCOMP_DENIED,
  seccompFilterFor,
  seccompProgram,
} from './seccomp-policy.js';
export {
  SECCOMP_ARCHES,
  SECCOMP_SYSCALL_NAMES,
  type SeccompArch,
  type SyscallName,
  seccompArchFor,
} from './seccomp-syscalls.js';
