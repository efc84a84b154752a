/**
 * A small assembler for classic BPF seccomp programs: the few instructions a syscall
 * filter needs, symbolic jump targets, and the binary form the kernel (and bwrap's
 * `--seccomp FD`) takes, an array of `struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; }`.
 *
 * A filter runs on `struct seccomp_data`: `nr` (the syscall number) at offset 0, `arch`
 * (an `AUDIT_ARCH_*` value) at 4, the instruction pointer at 8, and the six arguments
 * as 64-bit values from offset 16. Only little-endian machines are supported, so the
 * low 32 bits of argument `i` are at `16 + 8 * i`.
 *
 * @module
 */

/** One instruction: `struct sock_filter`. */
export interface SockFilter {
  readonly code: number;
  readonly jt: number;
  readonly jf: number;
  readonly k: number;
}

/** Opcodes used here (`BPF_LD|BPF_W|BPF_ABS`, `BPF_JMP|BPF_J*|BPF_K`, `BPF_RET|BPF_K`). */
export const BPF_OP = {
  ldAbsWord: 0x20,
  jeq: 0x15,
  jgt: 0x25,
  jge: 0x35,
  jset: 0x45,
  ret: 0x06,
} as const;

/** Offsets into `struct seccomp_data`. */
export const SECCOMP_DATA = {
  nr: 0,
  arch: 4,
  /** Low 32 bits of argument `i` (little-endian). */
  argLow: (i: number): number => 16 + 8 * i,
  /** Size of the structure; no load may reach past it. */
  size: 64,
} as const;

/** Filter return values (`SECCOMP_RET_*`). */
export const SECCOMP_RET = {
  killProcess: 0x8000_0000,
  errno: (errno: number): number => 0x0005_0000 | (errno & 0xffff),
  allow: 0x7fff_0000,
} as const;

/** Where a jump goes: the next instruction, or a label. */
export type JumpTarget = 'next' | { readonly label: string };

/** An instruction or a label, as written in a program before assembly. */
export type BpfItem =
  | { readonly op: 'label'; readonly name: string }
  | { readonly op: 'load'; readonly offset: number }
  | {
      readonly op: 'jeq' | 'jge' | 'jgt' | 'jset';
      readonly k: number;
      readonly jt: JumpTarget;
      readonly jf: JumpTarget;
    }
  | { readonly op: 'ret'; readonly k: number };

/** Shorthand for a label target. */
export function to(label: string): JumpTarget {
  return { label };
}

/** The kernel's limit on one filter's length (`BPF_MAXINSNS`). */
export const BPF_MAX_INSNS = 4096;

/**
 * Resolves labels into forward jump offsets and checks what the kernel will check:
 * jumps forward and within 255 instructions, loads aligned and inside `seccomp_data`,
 * constants within 32 bits, a length within {@link BPF_MAX_INSNS}, and a `ret` at the
 * end. Throws on a malformed program: it is a bug here, never an input from outside.
 */
export function assemble(items: readonly BpfItem[]): SockFilter[] {
  const labels = new Map<string, number>();
  let count = 0;
  for (const item of items) {
    if (item.op !== 'label') count += 1;
    else if (labels.has(item.name)) throw new Error(`bpf: label "${item.name}" defined twice`);
    else labels.set(item.name, count);
  }
  const out: SockFilter[] = [];
  const offset = (target: JumpTarget, at: number): number => {
    if (target === 'next') return 0;
    const index = labels.get(target.label);
    if (index === undefined) throw new Error(`bpf: no label "${target.label}"`);
    const distance = index - (at + 1);
    if (distance < 0 || distance > 255) {
      throw new Error(`bpf: jump to "${target.label}" spans ${distance} instructions (0..255)`);
    }
    return distance;
  };
  for (const item of items) {
    const at = out.length;
    switch (item.op) {
      case 'label':
        break;
      case 'load':
        if (item.offset % 4 !== 0 || item.offset < 0 || item.offset + 4 > SECCOMP_DATA.size) {
          throw new Error(`bpf: load at ${item.offset} is not a word inside seccomp_data`);
        }
        out.push({ code: BPF_OP.ldAbsWord, jt: 0, jf: 0, k: item.offset });
        break;
      case 'ret':
        out.push({ code: BPF_OP.ret, jt: 0, jf: 0, k: checkU32(item.k) });
        break;
      default:
        out.push({
          code: BPF_OP[item.op],
          jt: offset(item.jt, at),
          jf: offset(item.jf, at),
          k: checkU32(item.k),
        });
    }
  }
  if (out.length === 0 || out.length > BPF_MAX_INSNS) {
    throw new Error(`bpf: ${out.length} instructions (1..${BPF_MAX_INSNS})`);
  }
  if (out[out.length - 1]!.code !== BPF_OP.ret) throw new Error('bpf: the program must end in ret');
  return out;
}

/** The program as the kernel reads it: 8 bytes per instruction, little-endian. */
export function encodeFilter(program: readonly SockFilter[]): Buffer {
  const buf = Buffer.alloc(program.length * 8);
  program.forEach((insn, i) => {
    buf.writeUInt16LE(insn.code, i * 8);
    buf.writeUInt8(insn.jt, i * 8 + 2);
    buf.writeUInt8(insn.jf, i * 8 + 3);
    buf.writeUInt32LE(insn.k, i * 8 + 4);
  });
  return buf;
}

/** The inverse of {@link encodeFilter}. */
export function decodeFilter(bytes: Uint8Array): SockFilter[] {
  if (bytes.length % 8 !== 0)
    throw new Error(`bpf: ${bytes.length} bytes is not whole instructions`);
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const out: SockFilter[] = [];
  for (let i = 0; i < buf.length; i += 8) {
    out.push({
      code: buf.readUInt16LE(i),
      jt: buf.readUInt8(i + 2),
      jf: buf.readUInt8(i + 3),
      k: buf.readUInt32LE(i + 4),
    });
  }
  return out;
}

function checkU32(k: number): number {
  if (!Number.isInteger(k) || k < 0 || k > 0xffff_ffff) throw new Error(`bpf: ${k} is not a u32`);
  return k;
}
