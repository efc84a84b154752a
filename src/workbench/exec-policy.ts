/**
 * The lists behind the exec allowlist: what may run, what never may, and which
 * variables a command may not set.
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

/**
 * Programs and builtins allowed by default. Interpreters (`python3`, `node`, `go`) run
 * code by design and stay allowed: the sandbox holds them. Left off on purpose, and
 * addable by an operator: `npm`/`npx`/`pip` (they run package scripts through `sh`, and
 * the sandbox has no network to install from), `make` (recipes are shell strings),
 * `perl`/`ruby` (not in the runbook's list), `7z`, `bc`/`dc` (`dc` has a shell escape).
 */
export const DEFAULT_ALLOWED_PROGRAMS: readonly string[] = [
  // file inspection and mutation
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
  // text processing
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
  // archives and compression
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
  // hashing
  'md5sum',
  'sha1sum',
  'sha224sum',
  'sha256sum',
  'sha384sum',
  'sha512sum',
  'b2sum',
  'cksum',
  'sum',
  // fetch (the sandbox decides whether the network is reachable)
  'curl',
  'wget',
  // toolchains and data
  'python3',
  'python',
  'node',
  'go',
  'gofmt',
  'git',
  'jq',
  'yq',
  // harmless shell builtins and keywords
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
];

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

const SENSITIVE_EXACT = new Set([
  'PATH',
  'ENV',
  'SHELLOPTS',
  'PS4',
  'PROMPT_COMMAND',
  'GCONV_PATH',
  'NODE_OPTIONS',
  'PAGER',
  'EDITOR',
  'VISUAL',
  'BROWSER',
  'LESSOPEN',
  'LESSCLOSE',
  'TAR_OPTIONS',
  'ZIPOPT',
  'WGETRC',
]);

const SENSITIVE_PREFIXES = ['LD_', 'BASH', 'GIT_', 'DYLD_'];
const SENSITIVE_PARTS = ['PAGER', 'EDITOR', 'ASKPASS', '_COMMAND'];

/**
 * True for variables that decide which program runs or inject code into an allowed
 * one: `PATH` (a bare `ls` would find a workspace copy of a shell), the dynamic
 * loader's `LD_*`, bash's `BASH_ENV`/`BASH_CMDS`/..., `GIT_*` (ssh command, pager,
 * editor, exec path, config), pagers, editors, askpass helpers, `*_COMMAND` hooks,
 * `TAR_OPTIONS` (`--to-command`), `ZIPOPT`, `WGETRC`, `NODE_OPTIONS`, `GCONV_PATH`.
 *
 * The dispatch layer should apply the same test to the `env` map of an `exec` call.
 */
export function isSensitiveVariable(name: string): boolean {
  return (
    SENSITIVE_EXACT.has(name) ||
    SENSITIVE_PREFIXES.some((p) => name.startsWith(p)) ||
    SENSITIVE_PARTS.some((p) => name.includes(p))
  );
}
