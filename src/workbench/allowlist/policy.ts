/**
 * The lists behind the exec allowlist: what may run and what never may. The variables a
 * command may not set are in `sensitive-variables.ts`.
 *
 * The allowlist is defence in depth; the sandbox is the boundary. So the default list
 * covers what an agent needs for headless work (files, text, archives, hashes, fetch,
 * toolchains, jq/yq), and the never-lists close the obvious ways to run a string as a
 * program: shells, builtins that evaluate strings, and wrappers whose program cannot be
 * checked. Operators extend the default list by name (`extraAllowed`); the never-lists
 * cannot be extended away.
 *
 * @module
 */

/** A group of allowed programs, as the published table lists them. */
export interface ProgramGroup {
  /** What the group is for. */
  readonly label: string;
  /** The names, in the table's order. */
  readonly programs: readonly string[];
}

/**
 * Programs and builtins allowed by default, by what they are for. Interpreters (`python3`,
 * `node`, `go`) run code by design and stay allowed: the sandbox holds them. Left off on
 * purpose, and addable by an operator: `npm`/`npx`/`pip` (they run package scripts through
 * `sh`), `make` (recipes are shell strings), `perl`/`ruby` (not in the runbook's list), `7z`,
 * `bc`/`dc` (`dc` has a shell escape).
 */
export const ALLOWED_PROGRAM_GROUPS: readonly ProgramGroup[] = [
  {
    label: 'Files',
    programs: [
      'ls',
      'cat',
      'head',
      'tail',
      'wc',
      'stat',
      'file',
      'find',
      'du',
      'df',
      'tree',
      'cp',
      'mv',
      'rm',
      'mkdir',
      'rmdir',
      'touch',
      'ln',
      'chmod',
      'readlink',
      'realpath',
      'basename',
      'dirname',
      'pwd',
      'tee',
      'diff',
      'cmp',
      'comm',
      'patch',
      'truncate',
      'mktemp',
      'dd',
      'sync',
      'sleep',
      'date',
      'id',
      'whoami',
      'uname',
      'nproc',
      'printenv',
      'which',
    ],
  },
  {
    label: 'Text',
    programs: [
      'echo',
      'printf',
      'grep',
      'egrep',
      'fgrep',
      'sed',
      'awk',
      'gawk',
      'mawk',
      'cut',
      'sort',
      'uniq',
      'tr',
      'paste',
      'join',
      'fold',
      'fmt',
      'nl',
      'column',
      'expand',
      'unexpand',
      'rev',
      'tac',
      'split',
      'csplit',
      'shuf',
      'numfmt',
      'seq',
      'yes',
      'expr',
      'iconv',
      'base64',
      'base32',
      'od',
      'hexdump',
      'xxd',
      'strings',
    ],
  },
  {
    label: 'Archives and compression',
    programs: [
      'tar',
      'gzip',
      'gunzip',
      'zcat',
      'bzip2',
      'bunzip2',
      'bzcat',
      'xz',
      'unxz',
      'xzcat',
      'zip',
      'unzip',
    ],
  },
  {
    label: 'Hashes',
    programs: [
      'md5sum',
      'sha1sum',
      'sha224sum',
      'sha256sum',
      'sha384sum',
      'sha512sum',
      'b2sum',
      'cksum',
      'sum',
    ],
  },
  {
    label: 'Network clients',
    programs: ['curl', 'wget'],
  },
  {
    label: 'Toolchains and data',
    programs: ['python3', 'python', 'node', 'go', 'gofmt', 'git', 'jq', 'yq'],
  },
  {
    label: 'Shell builtins and keywords',
    programs: [
      'cd',
      'true',
      'false',
      ':',
      'test',
      '[',
      '[[',
      'read',
      'export',
      'readonly',
      'local',
      'declare',
      'typeset',
      'unset',
      'set',
      'shift',
      'exit',
      'return',
      'break',
      'continue',
      'wait',
      'umask',
      'ulimit',
      'type',
      'times',
      'kill',
      'let',
    ],
  },
];

/** Every program and builtin allowed by default: the groups' names, in order. */
export const DEFAULT_ALLOWED_PROGRAMS: readonly string[] = ALLOWED_PROGRAM_GROUPS.flatMap(
  (group) => group.programs,
);

/**
 * Builtins that run a string as code, run a file as shell code, or change what a name
 * means. Refused always: `command`/`builtin` bypass name lookup, `hash -p` and `alias`
 * rebind names, `trap` and `mapfile -C`/`readarray -C` run strings later, `enable -f`
 * loads code, `fc` re-runs history, `coproc` runs a background program,
 * `complete`/`compgen -C` run commands.
 */
export const FORBIDDEN_BUILTINS: readonly string[] = [
  'eval',
  'exec',
  'source',
  '.',
  'alias',
  'unalias',
  'command',
  'builtin',
  'enable',
  'trap',
  'fc',
  'hash',
  'coproc',
  'mapfile',
  'readarray',
  'complete',
  'compgen',
  'bind',
];

/**
 * Programs that run another program given as arguments in a way not checked here:
 * privilege changers, namespace and scheduling tools, tracers, schedulers and
 * multiplexers. `env`, `timeout`, `nice`, `nohup`, `stdbuf`, `xargs` and `time` are not
 * here: they are checked wrappers (the program they run is checked like any command).
 */
export const UNCHECKED_WRAPPERS: readonly string[] = [
  'sudo',
  'doas',
  'su',
  'runuser',
  'pkexec',
  'sg',
  'newgrp',
  'chroot',
  'setsid',
  'setpriv',
  'capsh',
  'unshare',
  'nsenter',
  'firejail',
  'bwrap',
  'proot',
  'fakeroot',
  'systemd-run',
  'start-stop-daemon',
  'daemonize',
  'strace',
  'ltrace',
  'gdb',
  'valgrind',
  'catchsegv',
  'watch',
  'flock',
  'parallel',
  'sem',
  'script',
  'unbuffer',
  'expect',
  'ionice',
  'taskset',
  'chrt',
  'prlimit',
  'numactl',
  'cgexec',
  'faketime',
  'rlwrap',
  'screen',
  'tmux',
  'at',
  'batch',
  'run-parts',
  'ssh-agent',
  'dbus-run-session',
  'busybox',
  'toybox',
];

/** Shells: never allowed, whatever an operator adds, since they run any string. */
export const SHELLS: readonly string[] = [
  'sh',
  'bash',
  'dash',
  'zsh',
  'ksh',
  'mksh',
  'pdksh',
  'oksh',
  'yash',
  'posh',
  'ash',
  'rbash',
  'csh',
  'tcsh',
  'fish',
  'elvish',
  'nu',
  'xonsh',
  'pwsh',
];

/** Wrappers whose program is found, parsed and checked as a command of its own. */
export const CHECKED_WRAPPERS: readonly string[] = [
  'env',
  'timeout',
  'nice',
  'nohup',
  'stdbuf',
  'xargs',
  'time',
];
