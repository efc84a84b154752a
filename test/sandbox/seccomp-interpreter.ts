import { BPF_OP, SECCOMP_DATA, type SockFilter } from '../../src/sandbox/seccomp/index.js';

/**
 * Runs a classic BPF seccomp program on one `seccomp_data`, the way the kernel does, for
 * the opcodes the filter uses (any other opcode throws: the program must not use it).
 * Also checks what the kernel's verifier checks: every jump lands inside the program.
 */

/** The input of one filter run. */
export interface SeccompData {
  nr: number;
  arch: number;
  /** Up to six arguments, as 64-bit values. */
  args?: readonly bigint[];
}

/** The filter's return value for `data`. */
export function runFilter(program: readonly SockFilter[], data: SeccompData): number {
  const bytes = Buffer.alloc(SECCOMP_DATA.size);
  bytes.writeUInt32LE(data.nr >>> 0, SECCOMP_DATA.nr);
  bytes.writeUInt32LE(data.arch >>> 0, SECCOMP_DATA.arch);
  for (const [i, arg] of (data.args ?? []).entries()) {
    bytes.writeBigUInt64LE(BigInt.asUintN(64, arg), 16 + 8 * i);
  }
  let acc = 0;
  let pc = 0;
  for (let steps = 0; steps <= program.length; steps++) {
    const insn = program[pc];
    if (insn === undefined) throw new Error(`bpf: fell off the program at ${pc}`);
    const jump = (taken: boolean) => {
      pc += 1 + (taken ? insn.jt : insn.jf);
    };
    switch (insn.code) {
      case BPF_OP.ldAbsWord:
        acc = bytes.readUInt32LE(insn.k);
        pc += 1;
        break;
      case BPF_OP.jeq:
        jump(acc === insn.k);
        break;
      case BPF_OP.jgt:
        jump(acc > insn.k);
        break;
      case BPF_OP.jge:
        jump(acc >= insn.k);
        break;
      case BPF_OP.jset:
        jump((acc & insn.k) !== 0);
        break;
      case BPF_OP.ret:
        return insn.k;
      default:
        throw new Error(`bpf: opcode 0x${insn.code.toString(16)} at ${pc}`);
    }
  }
  throw new Error('bpf: no ret reached');
}
