/**
 * The bubblewrap command line of one sandboxed command, as a pure function of its inputs.
 *
 * The sandbox sees: `/usr` (and the merged-/usr links `/bin`, `/lib`, `/lib64`, `/sbin`)
 * read-only, a handful of `/etc` entries the dynamic linker and common tools need,
 * generated `/etc/passwd`, `/etc/group` and `/etc/hosts`, a fresh `/proc` of its own pid
 * namespace, a minimal `/dev`, private size-capped tmpfs at `/tmp` and `/dev/shm`, and
 * the workspace read-write at `/workspace`. Nothing else of the host: not `/root`,
 * `/home`, `/var` (but an empty `/var/tmp`), `/run` (but `/run/memql` with the egress
 * socket and CA bundle, for a run given network), `/sys`, the host's `/proc` or the node's data directories.
 * Every namespace is new (no network but a private loopback), nested user namespaces
 * are disabled, the root and `/dev` are remounted read-only, and a seccomp filter
 * (`seccomp-policy.ts`) runs under all of it.
 *
 * @module
 */

import {
  BRIDGE_LAUNCH,
  BRIDGE_SOURCE,
  EGRESS_CA_BUNDLE_PATH,
  EGRESS_CACHE_PATH,
  EGRESS_SOCKET_PATH,
  type SandboxEgress,
} from '../egress-bridge.js';

/**
 * Host `/etc` entries bound read-only when present: the dynamic linker's cache and
 * configuration, Debian's alternatives links (`awk`, `editor`, ... point through them),
 * the time zone and the name-service switch. Nothing with secrets or host identity.
 */
export const SANDBOX_ETC_ENTRIES = [
  '/etc/alternatives',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/nsswitch.conf',
] as const;

/** How a top-level system directory appears on this host (merged /usr or not). */
export type SystemDirEntry =
  | { path: string; kind: 'symlink'; target: string }
  | { path: string; kind: 'dir' };

/** File descriptors the launcher passes to bwrap, and what each carries. */
export const BWRAP_FDS = {
  /** The sandbox writes one byte here just before running the command. */
  started: 3,
  passwd: 4,
  group: 5,
  hosts: 6,
  /**
   * bwrap writes `{"child-pid": N, ...}` here: the host pid of the sandbox's init. Only
   * ever waited on, never signalled: a command could forge it through `/proc/1/fd`.
   */
  info: 7,
  /**
   * The seccomp filter (`seccomp-policy.ts`) as bwrap's `--seccomp` reads it: compiled
   * BPF, read to EOF, installed just before the prelude runs.
   */
  seccomp: 8,
  /**
   * bwrap's own arguments, NUL-separated, read to EOF (`--args`): its argv then holds
   * nothing but that option, so the sandbox's process 1 (a copy of bwrap) shows no host
   * path, no command text and no environment in `/proc/1/cmdline`.
   */
  args: 9,
} as const;

/** Inputs of {@link bwrapArgs}. */
export interface BwrapArgsInput {
  /** Host path bound at `/workspace`. */
  workspaceDir: string;
  /** Working directory relative to `/workspace`, already normalised. */
  cwd: string;
  /** The complete environment of the command. */
  env: Readonly<Record<string, string>>;
  /** Shell text run by `/bin/sh -c`. */
  command: string;
  /** `/bin`, `/lib`, `/lib64`, `/sbin` as found on the host. */
  systemDirs: readonly SystemDirEntry[];
  /** Size of the `/tmp` tmpfs in bytes. */
  tmpSizeBytes: number;
  /** Size of the `/dev/shm` tmpfs in bytes. */
  shmSizeBytes: number;
  /**
   * uid/gid to map inside the user namespace. Set when bwrap itself runs as some other
   * unprivileged user (a node not started as root); absent when the launcher already
   * dropped to the sandbox uid, which bwrap then maps to itself.
   */
  mapToUid?: number;
  /** Install the seccomp filter that the launcher writes to {@link BWRAP_FDS.seccomp}. */
  seccomp?: boolean;
  /**
   * The run's way to the network (see `egress-bridge.ts`): its proxy socket and CA
   * bundle are bound under `/run/memql`, and the bridge starts before the command.
   * Absent: no network at all. The caller puts {@link egressEnvironment} in `env`.
   */
  egress?: SandboxEgress;
}

/**
 * Runs inside the sandbox before the command: signals "started" on fd 3, closes every
 * descriptor the launcher passed (so the command can neither forge the signal nor read
 * them), then runs the command as `/bin/sh -c`. When the signal cannot be written the
 * node is gone (it holds the only read end; SIGPIPE is ignored, inherited from node),
 * and the command never starts: a node killed while bwrap was still setting up, before
 * bwrap's init had armed `--die-with-parent`, leaves no command running.
 */
export const SANDBOX_PRELUDE = `printf . >&${BWRAP_FDS.started} || exit 125; exec ${Object.values(
  BWRAP_FDS,
)
  .map((fd) => `${fd}>&-`)
  .join(' ')}; exec /bin/sh -c "$1"`;

/**
 * {@link SANDBOX_PRELUDE} for a command with egress: once the launcher's descriptors are
 * closed (the bridge keeps none of them), the bridge starts and listens (`$2`, its
 * source), then the command runs.
 */
export const SANDBOX_EGRESS_PRELUDE = SANDBOX_PRELUDE.replace(
  'exec /bin/sh -c "$1"',
  BRIDGE_LAUNCH,
);

/**
 * bwrap's command line in its two parts. The launch chain passes the options on
 * {@link BWRAP_FDS.args} and only `--args <fd> -- <program>` on bwrap's argv: the
 * sandbox's process 1 is a copy of bwrap, and its `/proc/1/cmdline` is what every
 * process in the sandbox can read. The options name the workspace's host path (its
 * bind) and the environment; the program is the prelude and the command's own text.
 */
export interface BwrapCommandLine {
  /** Everything before `--`. */
  readonly options: readonly string[];
  /** What bwrap runs, after `--`: `/bin/sh -c <prelude> memql-sandbox <command>`. */
  readonly program: readonly string[];
}

/**
 * The options as bwrap's `--args` reads them: each one NUL-terminated. An option with
 * a NUL byte of its own would split into two, and the second would be read as an
 * option of bwrap's (a bind of the host's root, say): refused, as `spawn` refuses a NUL
 * in an argument.
 */
export function encodeBwrapOptions(options: readonly string[]): Buffer {
  for (const option of options) {
    if (option.includes('\0')) throw new TypeError('a bwrap option may not contain a NUL byte');
  }
  return Buffer.from(options.map((o) => `${o}\0`).join(''), 'utf8');
}

/** bwrap's argv: its options come on {@link BWRAP_FDS.args}. */
export function bwrapArgv(line: BwrapCommandLine): string[] {
  return ['--args', String(BWRAP_FDS.args), '--', ...line.program];
}

/** The bwrap arguments (without the bwrap binary itself), as one list. */
export function bwrapArgs(input: BwrapArgsInput): string[] {
  const line = bwrapCommandLine(input);
  return [...line.options, '--', ...line.program];
}

/** The bwrap command line of one sandbox, in its two parts. */
export function bwrapCommandLine(input: BwrapArgsInput): BwrapCommandLine {
  const args = [
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--die-with-parent',
    '--new-session',
    '--hostname',
    'memql-sandbox',
    '--info-fd',
    String(BWRAP_FDS.info),
  ];
  if (input.seccomp) args.push('--seccomp', String(BWRAP_FDS.seccomp));
  if (input.mapToUid !== undefined) {
    args.push('--uid', String(input.mapToUid), '--gid', String(input.mapToUid));
  }
  args.push('--ro-bind', '/usr', '/usr');
  for (const dir of input.systemDirs) {
    if (dir.kind === 'symlink') args.push('--symlink', dir.target, dir.path);
    else args.push('--ro-bind', dir.path, dir.path);
  }
  for (const entry of SANDBOX_ETC_ENTRIES) args.push('--ro-bind-try', entry, entry);
  args.push(
    '--ro-bind-data',
    String(BWRAP_FDS.passwd),
    '/etc/passwd',
    '--ro-bind-data',
    String(BWRAP_FDS.group),
    '/etc/group',
    '--ro-bind-data',
    String(BWRAP_FDS.hosts),
    '/etc/hosts',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--size',
    String(input.shmSizeBytes),
    '--tmpfs',
    '/dev/shm',
    '--size',
    String(input.tmpSizeBytes),
    '--tmpfs',
    '/tmp',
    // Where programs expect to write besides /tmp (pip, the ComputeSDK probe): as empty.
    '--size',
    String(input.tmpSizeBytes),
    '--tmpfs',
    '/var/tmp',
    '--bind',
    input.workspaceDir,
    '/workspace',
    ...(input.egress
      ? [
          '--dir',
          '/run/memql',
          '--bind',
          input.egress.socketPath,
          EGRESS_SOCKET_PATH,
          '--ro-bind',
          input.egress.caBundlePath,
          EGRESS_CA_BUNDLE_PATH,
          ...(input.egress.cacheDir ? ['--bind', input.egress.cacheDir, EGRESS_CACHE_PATH] : []),
        ]
      : []),
    '--remount-ro',
    '/dev',
    '--remount-ro',
    '/',
    '--chdir',
    sandboxCwd(input.cwd),
    '--clearenv',
  );
  for (const [name, value] of Object.entries(input.env)) args.push('--setenv', name, value);
  return {
    options: args,
    program: input.egress
      ? ['/bin/sh', '-c', SANDBOX_EGRESS_PRELUDE, 'memql-sandbox', input.command, BRIDGE_SOURCE]
      : ['/bin/sh', '-c', SANDBOX_PRELUDE, 'memql-sandbox', input.command],
  };
}

/** `/etc/passwd`, `/etc/group` and `/etc/hosts` of the sandbox. */
/** Where a workspace-relative working directory is inside the sandbox. */
export function sandboxCwd(cwd: string): string {
  return cwd === '.' ? '/workspace' : `/workspace/${cwd}`;
}

export function sandboxEtcFiles(uid: number): { passwd: string; group: string; hosts: string } {
  return {
    passwd: `root:x:0:0:root:/nonexistent:/usr/sbin/nologin\nsandbox:x:${uid}:${uid}:memql sandbox:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
    group: `root:x:0:\nsandbox:x:${uid}:\nnogroup:x:65534:\n`,
    hosts: '127.0.0.1\tlocalhost memql-sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n',
  };
}
