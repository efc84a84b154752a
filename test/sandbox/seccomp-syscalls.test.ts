import { readFile } from 'node:fs/promises';
import t from 'tap';
import {
  SECCOMP_ARCHES,
  SECCOMP_SYSCALL_NAMES,
  type SeccompArch,
} from '../../src/sandbox/seccomp/index.js';

/**
 * The syscall tables against the kernel's own headers (linux-libc-dev, installed by
 * scripts/setup/install-sandbox.sh): aarch64's numbers are the generic table, present on every
 * machine; x86_64's header is checked on x86_64 machines, which CI is.
 */

const HEADERS: Record<SeccompArch['name'], string> = {
  x86_64: '/usr/include/x86_64-linux-gnu/asm/unistd_64.h',
  aarch64: '/usr/include/asm-generic/unistd.h',
};

/** `#define __NR_name 123` (and the generic table's `__NR3264_name`) lines of a header. */
function parseHeader(text: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const m of text.matchAll(/^#define __NR(?:3264)?_(\w+)\s+(\d+)\s*$/gm)) {
    found.set(m[1]!, Number(m[2]));
  }
  return found;
}

for (const arch of SECCOMP_ARCHES) {
  const mine = arch.name === 'aarch64' || (arch.name === 'x86_64' && process.arch === 'x64');
  if (!mine) continue;
  t.test(`${arch.name}: every number is the kernel's`, async (t) => {
    const text = await readFile(HEADERS[arch.name], 'utf8').catch((err: Error) => {
      throw new Error(
        `${err.message}: run scripts/setup/install-sandbox.sh (it installs linux-libc-dev)`,
      );
    });
    const header = parseHeader(text);
    for (const name of SECCOMP_SYSCALL_NAMES) {
      t.equal(arch.syscalls[name], header.get(name), name);
    }
  });
}
