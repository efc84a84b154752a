/**
 * Variables a command may not set: neither in the `env` map of an `exec` call nor by an
 * assignment in the command line (`HOME=/workspace git status`, `export PYTHONPATH=.`,
 * `env NODE_OPTIONS=... node`, `read PATH`...).
 *
 * Two kinds, one table: variables that decide which program runs or load code into an
 * allowed one (`PATH`, `LD_PRELOAD`, `BASH_ENV`), and variables that redirect where a
 * tool reads its configuration (`HOME`, `XDG_CONFIG_HOME`, `CURL_HOME`), since a
 * configuration file in the workspace can run programs too (with `HOME=/workspace`, a
 * workspace `.gitconfig` setting `core.fsmonitor` makes `git status` run it). The
 * allowlist reasons about what a command line runs; these would change that behind its
 * back. The sandbox holds either way: this is defence in depth.
 *
 * Variables that only look like these stay settable, each with its reason in
 * {@link SETTABLE_VARIABLES}.
 *
 * @module
 */

/** One entry of {@link SENSITIVE_VARIABLES}. */
export interface SensitiveVariableRule {
  /** A whole name, the start of names, or a part of names, per {@link match}. */
  readonly pattern: string;
  /** How {@link pattern} matches a name. */
  readonly match: 'name' | 'prefix' | 'part';
  /** Match regardless of case (npm reads `npm_config_*` in any case). */
  readonly anyCase?: true;
  /** Why a command may not set it. */
  readonly reason: string;
}

/** Every variable a command may not set, with the reason. */
export const SENSITIVE_VARIABLES: readonly SensitiveVariableRule[] = [
  // Which program runs, and code loaded into every program.
  { pattern: 'PATH', match: 'name', reason: 'decides which program a bare name runs' },
  {
    pattern: 'SHELL',
    match: 'name',
    reason: 'programs that start a shell (editors, pagers, `script`) run the one it names',
  },
  {
    pattern: 'LD_',
    match: 'prefix',
    reason:
      "the dynamic loader's variables (`LD_PRELOAD`, `LD_LIBRARY_PATH`, `LD_AUDIT`) load code into every program",
  },
  { pattern: 'DYLD_', match: 'prefix', reason: "the macOS loader's equivalent of `LD_*`" },
  {
    pattern: 'GLIBC_TUNABLES',
    match: 'name',
    reason: "read by the loader of every program; it tunes glibc's allocator and loader",
  },
  {
    pattern: 'GCONV_PATH',
    match: 'name',
    reason: 'iconv loads conversion modules (shared objects) from it',
  },
  { pattern: 'LOCPATH', match: 'name', reason: 'locale data is read from it' },
  {
    pattern: 'NLSPATH',
    match: 'name',
    reason: 'message catalogs are read from it, and they hold printf formats',
  },
  // The shell's own hooks.
  {
    pattern: 'BASH',
    match: 'prefix',
    reason:
      '`BASH_ENV` runs a file in every bash, `BASH_FUNC_*` defines functions, `BASHOPTS` sets options',
  },
  { pattern: 'ENV', match: 'name', reason: 'sh runs the file it names' },
  { pattern: 'SHELLOPTS', match: 'name', reason: 'sets shell options in every bash' },
  { pattern: 'PS4', match: 'name', reason: 'expanded, substitutions included, under `set -x`' },
  { pattern: 'PROMPT_COMMAND', match: 'name', reason: 'bash runs it' },
  {
    pattern: 'CDPATH',
    match: 'name',
    reason: '`cd dir` then goes somewhere other than the directory the command names',
  },
  // Configuration read from a directory the variable names.
  {
    pattern: 'HOME',
    match: 'name',
    reason:
      'tools read their configuration under it (`.gitconfig`, `.curlrc`, `.npmrc`, `.wgetrc`, `.pythonrc`), and configuration can run programs',
  },
  {
    pattern: 'XDG_',
    match: 'prefix',
    reason: '`XDG_CONFIG_HOME` and its kind say where git, curl and others read configuration',
  },
  { pattern: 'CURL_HOME', match: 'name', reason: 'curl reads `.curlrc` from it' },
  { pattern: 'WGETRC', match: 'name', reason: 'wget reads its startup file from it' },
  { pattern: 'SYSTEM_WGETRC', match: 'name', reason: 'wget reads its system startup file from it' },
  {
    pattern: 'GIT_',
    match: 'prefix',
    reason:
      "git's environment runs programs or redirects configuration: `GIT_CONFIG*`, `GIT_DIR`, `GIT_EXEC_PATH`, `GIT_SSH*`, `GIT_ASKPASS`, `GIT_PAGER`, `GIT_EDITOR`, `GIT_TEMPLATE_DIR`",
  },
  // Options read from the environment that run programs.
  {
    pattern: 'TAR_OPTIONS',
    match: 'name',
    reason: 'tar takes options from it (`--to-command`, `--use-compress-program`)',
  },
  { pattern: 'ZIPOPT', match: 'name', reason: 'zip takes options from it (`-TT` runs a command)' },
  { pattern: 'LESS', match: 'name', reason: 'less takes options from it (`+!` runs a command)' },
  { pattern: 'LESSOPEN', match: 'name', reason: 'less runs it as an input preprocessor' },
  { pattern: 'LESSCLOSE', match: 'name', reason: 'less runs it after an input preprocessor' },
  { pattern: 'LESSEDIT', match: 'name', reason: 'less runs it as the editor command' },
  { pattern: 'LESSKEY', match: 'prefix', reason: 'less reads key bindings from the file it names' },
  { pattern: 'BROWSER', match: 'name', reason: 'names a program to run' },
  { pattern: 'VISUAL', match: 'name', reason: 'names an editor to run' },
  { pattern: 'EXINIT', match: 'name', reason: 'vi runs the commands in it' },
  { pattern: 'VIMINIT', match: 'name', reason: 'vim runs the commands in it' },
  {
    pattern: 'PAGER',
    match: 'part',
    reason: 'names a pager to run (`PAGER`, `GIT_PAGER`, `MANPAGER`, `SYSTEMD_PAGER`)',
  },
  {
    pattern: 'EDITOR',
    match: 'part',
    reason: 'names an editor to run (`EDITOR`, `GIT_EDITOR`, `SUDO_EDITOR`)',
  },
  {
    pattern: 'ASKPASS',
    match: 'part',
    reason: 'names a program to run for a password (`SSH_ASKPASS`, `GIT_ASKPASS`)',
  },
  { pattern: '_COMMAND', match: 'part', reason: 'hooks that name a command to run' },
  // Interpreters and their package managers.
  {
    pattern: 'PYTHON',
    match: 'prefix',
    reason:
      '`PYTHONPATH`, `PYTHONHOME`, `PYTHONUSERBASE`, `PYTHONSTARTUP`, `PYTHONWARNINGS` and `PYTHONBREAKPOINT` load modules from where they say',
  },
  {
    pattern: 'PIP_',
    match: 'prefix',
    reason: 'pip takes any option from `PIP_<OPTION>`, a configuration file included',
  },
  {
    pattern: 'NODE_',
    match: 'prefix',
    reason:
      '`NODE_OPTIONS` (`--require`), `NODE_PATH`, `NODE_REPL_EXTERNAL_MODULE` and `NODE_EXTRA_CA_CERTS` load code or trust',
  },
  {
    pattern: 'NPM_CONFIG_',
    match: 'prefix',
    anyCase: true,
    reason: 'npm takes any setting from `npm_config_*` in any case (`script-shell`, `userconfig`)',
  },
  {
    pattern: 'PERL',
    match: 'prefix',
    reason: '`PERL5LIB`, `PERLLIB`, `PERL5OPT` and `PERL5DB` load modules or options into perl',
  },
  { pattern: 'RUBY', match: 'prefix', reason: '`RUBYOPT` and `RUBYLIB` load code into ruby' },
  {
    pattern: 'GOFLAGS',
    match: 'name',
    reason: 'go takes flags from it (`-toolexec` runs a program)',
  },
  { pattern: 'GOENV', match: 'name', reason: "names go's configuration file" },
  { pattern: 'GOTOOLCHAIN', match: 'name', reason: 'makes go run another toolchain' },
  {
    pattern: 'JAVA_TOOL_OPTIONS',
    match: 'name',
    reason: '`-javaagent` loads code into every JVM',
  },
  { pattern: '_JAVA_OPTIONS', match: 'name', reason: '`-javaagent` loads code into every JVM' },
  { pattern: 'JDK_JAVA_OPTIONS', match: 'name', reason: '`-javaagent` loads code into java' },
  {
    pattern: 'AWKPATH',
    match: 'name',
    reason: 'gawk finds `-f` and `@include` files through it',
  },
  {
    pattern: 'AWKLIBPATH',
    match: 'name',
    reason: 'gawk loads `@load` extensions (shared objects) from it',
  },
  // Trust.
  {
    pattern: 'SSL_CERT_',
    match: 'prefix',
    reason: '`SSL_CERT_FILE`/`SSL_CERT_DIR` decide which certificates are trusted',
  },
  { pattern: 'CURL_CA_BUNDLE', match: 'name', reason: 'decides which certificates curl trusts' },
  {
    pattern: 'REQUESTS_CA_BUNDLE',
    match: 'name',
    reason: 'decides which certificates Python requests trusts',
  },
  {
    pattern: 'OPENSSL_',
    match: 'prefix',
    reason:
      '`OPENSSL_CONF` loads engines and providers (shared objects); `OPENSSL_MODULES` names their directory',
  },
];

/**
 * Names that a rule of {@link SENSITIVE_VARIABLES} would catch, or that look like them,
 * and stay settable on purpose, each with the reason.
 */
export const SETTABLE_VARIABLES: readonly { readonly name: string; readonly reason: string }[] = [
  { name: 'PYTHONUNBUFFERED', reason: 'only turns off output buffering' },
  { name: 'PYTHONDONTWRITEBYTECODE', reason: 'only stops writing .pyc files' },
  {
    name: 'PYTHONIOENCODING',
    reason: 'only picks an encoding; codecs load from the standard library alone',
  },
  { name: 'PYTHONUTF8', reason: 'only turns on UTF-8 mode' },
  { name: 'PYTHONHASHSEED', reason: 'only seeds hashing' },
  { name: 'PYTHONFAULTHANDLER', reason: 'only prints tracebacks on a crash' },
  { name: 'PYTHONSAFEPATH', reason: 'only removes the script directory from the module path' },
  { name: 'PYTHONNOUSERSITE', reason: 'only removes the user site directory from the module path' },
  { name: 'NODE_ENV', reason: 'a convention read by application code, not by node' },
  { name: 'NODE_NO_WARNINGS', reason: 'only silences warnings' },
  {
    name: 'TMPDIR',
    reason:
      "inside the sandbox every path is the sandbox's own; it can only move temporary files into the workspace",
  },
  {
    name: 'IFS',
    reason:
      'every shell resets it at start, so an environment entry changes nothing; `IFS=, read` in a command only splits that read',
  },
  { name: 'TZ', reason: 'only picks a time zone' },
  { name: 'LANG', reason: 'only picks a locale from the system locale data' },
  { name: 'LC_ALL', reason: 'only picks a locale from the system locale data' },
  { name: 'TERM', reason: 'only names the terminal type' },
];

const SETTABLE = new Set(SETTABLE_VARIABLES.map((v) => v.name));

/** The rule that makes `name` sensitive, or null when a command may set it. */
export function sensitiveVariableRule(name: string): SensitiveVariableRule | null {
  if (SETTABLE.has(name)) return null;
  for (const rule of SENSITIVE_VARIABLES) {
    const subject = rule.anyCase ? name.toUpperCase() : name;
    const hit =
      rule.match === 'name'
        ? subject === rule.pattern
        : rule.match === 'prefix'
          ? subject.startsWith(rule.pattern)
          : subject.includes(rule.pattern);
    if (hit) return rule;
  }
  return null;
}

/**
 * True for variables a command may not set (see {@link SENSITIVE_VARIABLES}). The
 * allowlist applies it to assignments in the command line; `exec` applies it to its
 * `env` map.
 */
export function isSensitiveVariable(name: string): boolean {
  return sensitiveVariableRule(name) !== null;
}
