import t from 'tap';
import { WorkbenchError } from '../../../src/contract/errors.js';
import { ProcessRunner } from '../../../src/sandbox/process-runner.js';
import { prepareExec } from '../../../src/workbench/actions/index.js';
import {
  type CommandChecker,
  createCommandChecker,
} from '../../../src/workbench/allowlist/index.js';
import {
  isSensitiveVariable,
  SENSITIVE_VARIABLES,
  SETTABLE_VARIABLES,
  sensitiveVariableRule,
} from '../../../src/workbench/allowlist/sensitive-variables.js';

/**
 * The variables a command may not set, table-driven: each is refused in `exec`'s `env`
 * map (`invalid_arguments` naming `args.env.<NAME>`) and as an assignment in the command
 * line (`sensitive_variable`), and the look-alikes kept on purpose stay settable.
 */

/** Names that redirect a tool's configuration or load code, with the rule that catches them. */
const REFUSED: readonly [name: string, pattern: string][] = [
  ['HOME', 'HOME'],
  ['XDG_CONFIG_HOME', 'XDG_'],
  ['XDG_DATA_HOME', 'XDG_'],
  ['XDG_RUNTIME_DIR', 'XDG_'],
  ['PYTHONPATH', 'PYTHON'],
  ['PYTHONSTARTUP', 'PYTHON'],
  ['PYTHONHOME', 'PYTHON'],
  ['PYTHONUSERBASE', 'PYTHON'],
  ['PYTHONWARNINGS', 'PYTHON'],
  ['PYTHONBREAKPOINT', 'PYTHON'],
  ['PIP_CONFIG_FILE', 'PIP_'],
  ['CURL_HOME', 'CURL_HOME'],
  ['WGETRC', 'WGETRC'],
  ['GIT_CONFIG', 'GIT_'],
  ['GIT_CONFIG_GLOBAL', 'GIT_'],
  ['GIT_CONFIG_COUNT', 'GIT_'],
  ['GIT_DIR', 'GIT_'],
  ['GIT_EXEC_PATH', 'GIT_'],
  ['GIT_SSH', 'GIT_'],
  ['GIT_SSH_COMMAND', 'GIT_'],
  ['GIT_ASKPASS', 'GIT_'],
  ['GIT_TEMPLATE_DIR', 'GIT_'],
  ['NODE_OPTIONS', 'NODE_'],
  ['NODE_PATH', 'NODE_'],
  ['NODE_REPL_EXTERNAL_MODULE', 'NODE_'],
  ['NPM_CONFIG_USERCONFIG', 'NPM_CONFIG_'],
  ['npm_config_script_shell', 'NPM_CONFIG_'],
  ['Npm_Config_Prefix', 'NPM_CONFIG_'],
  ['PERL5LIB', 'PERL'],
  ['PERL5OPT', 'PERL'],
  ['RUBYOPT', 'RUBY'],
  ['RUBYLIB', 'RUBY'],
  ['GOFLAGS', 'GOFLAGS'],
  ['JAVA_TOOL_OPTIONS', 'JAVA_TOOL_OPTIONS'],
  ['AWKLIBPATH', 'AWKLIBPATH'],
  ['BASH_ENV', 'BASH'],
  ['BASH_FUNC_ls%%', 'BASH'],
  ['ENV', 'ENV'],
  ['SHELLOPTS', 'SHELLOPTS'],
  ['PS4', 'PS4'],
  ['PROMPT_COMMAND', 'PROMPT_COMMAND'],
  ['CDPATH', 'CDPATH'],
  ['SHELL', 'SHELL'],
  ['PATH', 'PATH'],
  ['LD_PRELOAD', 'LD_'],
  ['LD_LIBRARY_PATH', 'LD_'],
  ['LD_AUDIT', 'LD_'],
  ['GLIBC_TUNABLES', 'GLIBC_TUNABLES'],
  ['GCONV_PATH', 'GCONV_PATH'],
  ['LOCPATH', 'LOCPATH'],
  ['NLSPATH', 'NLSPATH'],
  ['PAGER', 'PAGER'],
  ['MANPAGER', 'PAGER'],
  ['EDITOR', 'EDITOR'],
  ['VISUAL', 'VISUAL'],
  ['SSH_ASKPASS', 'ASKPASS'],
  ['LESSOPEN', 'LESSOPEN'],
  ['TAR_OPTIONS', 'TAR_OPTIONS'],
  ['SSL_CERT_FILE', 'SSL_CERT_'],
  ['SSL_CERT_DIR', 'SSL_CERT_'],
  ['CURL_CA_BUNDLE', 'CURL_CA_BUNDLE'],
  ['REQUESTS_CA_BUNDLE', 'REQUESTS_CA_BUNDLE'],
  ['OPENSSL_CONF', 'OPENSSL_'],
];

/** Names a command may set: ordinary ones, and the look-alikes kept on purpose. */
const SETTABLE: readonly string[] = [
  'FOO',
  'CI',
  'DEBUG',
  'path',
  'home',
  'LESSONS',
  'LC_CTYPE',
  ...SETTABLE_VARIABLES.map((v) => v.name),
];

let checker: CommandChecker;
t.before(async () => {
  checker = await createCommandChecker();
});

const deps = () => ({
  checker,
  runner: { runner: new ProcessRunner(), warnings: [] },
  limits: {
    defaultTimeoutMs: 1000,
    maxTimeoutMs: 1000,
    outputLimitBytes: 1024,
    memoryLimitBytes: 1 << 20,
    pidsLimit: 16,
  },
});

/** The error code and field of `exec {command: 'ls', env: {[name]: 'x'}}`, or 'ok'. */
function envVerdict(name: string): string {
  try {
    prepareExec(deps(), { command: 'ls', env: { [name]: 'x' } });
    return 'ok';
  } catch (err) {
    if (!(err instanceof WorkbenchError)) throw err;
    return `${err.code} ${(err.payload as { field?: string } | undefined)?.field}`;
  }
}

/** The allowlist's reason and name for each way a command line can set `name`. */
function inlineVerdicts(name: string): string[] {
  return [`${name}=x ls`, `export ${name}=x`, `env ${name}=x ls`, `read ${name}`].map((command) => {
    const r = checker.check(command);
    return r.ok ? 'ok' : `${r.reason} ${r.name}`;
  });
}

t.test('every refused name, by the rule that says why', async (t) => {
  for (const [name, pattern] of REFUSED) {
    t.equal(sensitiveVariableRule(name)?.pattern, pattern, name);
  }
});

t.test("exec's env map refuses each one, naming the entry", async (t) => {
  for (const [name] of REFUSED) {
    t.equal(envVerdict(name), `invalid_arguments args.env.${name}`, name);
  }
});

t.test('the command line may not set them either', async (t) => {
  for (const [name] of REFUSED) {
    if (name.includes('%')) continue; // not a shell name: the parser refuses it otherwise
    const want = `sensitive_variable ${name}`;
    t.same(inlineVerdicts(name), [want, want, want, want], name);
  }
  t.same(
    summary(checker.check('HOME=/workspace git status')),
    'sensitive_variable HOME',
    'the case the review found',
  );
});

t.test('look-alikes and ordinary names stay settable, in env and inline', async (t) => {
  for (const name of SETTABLE) {
    t.equal(isSensitiveVariable(name), false, name);
    t.equal(envVerdict(name), 'ok', name);
    t.same(inlineVerdicts(name), ['ok', 'ok', 'ok', 'ok'], name);
  }
  t.same(summary(checker.check('while IFS=, read -r a b; do echo "$a"; done < f')), 'ok');
});

t.test('the table is consistent', async (t) => {
  t.same(
    SENSITIVE_VARIABLES.filter((r) => r.reason.length < 10).map((r) => r.pattern),
    [],
    'every rule says why',
  );
  t.same(
    SENSITIVE_VARIABLES.filter((r) => !/^[A-Z_][A-Z0-9_]*$/.test(r.pattern)).map((r) => r.pattern),
    [],
    'patterns are upper case (anyCase rules match any case)',
  );
  const names = SENSITIVE_VARIABLES.filter((r) => r.match === 'name').map((r) => r.pattern);
  t.same(
    SETTABLE_VARIABLES.filter((v) => names.includes(v.name)),
    [],
    'no settable name is also refused by name',
  );
  const patterns = SENSITIVE_VARIABLES.map((r) => `${r.match}:${r.pattern}`);
  t.equal(new Set(patterns).size, patterns.length, 'no rule twice');
});

function summary(r: ReturnType<CommandChecker['check']>): string {
  return r.ok ? 'ok' : `${r.reason} ${r.name}`;
}
