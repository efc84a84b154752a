/**
 * The identity probe of a time-to-interactive measurement, as sandbox benchmarks run
 * it before `node -v`: one shell line that fails when a marker an earlier sandbox left
 * in `/tmp` or `/var/tmp` is there (a reused sandbox), prints the sandbox's namespaces,
 * cgroup digest, boot id, init command line and uptime as `key=value` lines, and leaves
 * a marker of its own in both. Cases 16 and 17 run it.
 *
 * @module
 */

const MARKER = '.memql_tti_marker';

/** The probe's command line, leaving `token` as its marker. */
export function probeCommand(token: string): string {
  return [
    `for f in /tmp/${MARKER} /var/tmp/${MARKER}; do if [ -e "$f" ]; then echo "marker of an earlier sandbox: $f" >&2; exit 3; fi; done`,
    'mnt=$(readlink /proc/self/ns/mnt); pidns=$(readlink /proc/self/ns/pid); uts=$(readlink /proc/self/ns/uts)',
    'cg=$(cat /proc/self/cgroup | sha256sum | cut -d" " -f1); boot=$(cat /proc/sys/kernel/random/boot_id)',
    `init=$(tr -d '\\0' < /proc/1/cmdline | head -c 64); up=$(cut -d' ' -f1 /proc/uptime)`,
    `printf 'mnt=%s\\npid=%s\\nuts=%s\\ncgroup=%s\\nboot=%s\\ninit=%s\\nuptime=%s\\n' "$mnt" "$pidns" "$uts" "$cg" "$boot" "$init" "$up"`,
    `printf '%s' '${token}' > /tmp/${MARKER}`,
    `printf '%s' '${token}' > /var/tmp/${MARKER}`,
  ].join('; ');
}

/** Throws unless a probe exited 0 and printed its lines. */
export function checkProbe(exitCode: number | null, stdout: string, stderr: string): void {
  if (exitCode !== 0 || !/^mnt=mnt:\[\d+\]\n/.test(stdout) || !/\nuptime=[\d.]+\n$/.test(stdout)) {
    throw new Error(
      `the probe exited ${exitCode}: ${stderr.slice(0, 300)} ${stdout.slice(0, 200)}`,
    );
  }
}
