// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are shell command lines, not templates
import t from 'tap';
import {
  type CheckResult,
  type CommandChecker,
  createCommandChecker,
  DEFAULT_COMMAND_CHECK_LIMITS,
  type DenyReason,
  denialPayload,
  validateExtraAllowed,
} from '../../../src/workbench/allowlist/checker.js';

/**
 * The exec allowlist, table-driven: every bypass family refused with the right reason
 * and offending name, and ordinary agent commands left alone. No filesystem: names
 * given as paths are covered in checker-paths.test.ts.
 */

type Expected = 'ok' | readonly [reason: DenyReason, name: string];

const ALLOWED: readonly string[] = [
  'ls -la',
  "echo '$(sh)'",
  "echo '`sh`' '<(sh)'",
  "cat <<'EOF'\n$(sh)\nEOF",
  'cat <<"EOF"\n$(sh) `sh`\nEOF',
  'cat <<\\EOF\n$(sh)\nEOF',
  'cat <<EOF\nhello $USER\nEOF',
  'cat <<-EOF\n\thello\n\tEOF',
  'cat a | grep b | sort | uniq -c | sort -rn | head -5',
  "python3 -c 'print(1)'",
  "node -e 'console.log(1)'",
  'git status && git diff',
  'git log --oneline -n 5 | cat',
  "git config user.name 'Agent'",
  'git clone ./repo copy',
  'tar czf out.tgz dir',
  'tar -xzf a.tgz -C out',
  'jq .a file.json',
  'yq .a f.yaml',
  'for f in *.txt; do wc -l "$f"; done',
  'cd sub && ls',
  'echo hi > out.txt 2>&1',
  'X=1 ls',
  'x=$(ls | wc -l); echo "$x"',
  'export FOO=bar; echo $FOO',
  'env ls',
  'env -i FOO=1 ls',
  'env',
  'xargs ls',
  'ls -1 | xargs -I{} echo {}',
  'find . -name x',
  'find . -name "*.py" -type f -print',
  'find -- . -maxdepth 2 -newer stamp',
  'timeout 5 ls',
  'nice -n 5 ls',
  'nohup ls',
  'stdbuf -oL grep x f',
  'time ls',
  'time -p ls',
  "sed -n 's/a/b/p' f",
  "sed -i -e 's/x/y/g' -e '/^#/d' f",
  "sed '1~2{s|a|e|g;p}' f",
  "awk '{print $1}' f",
  "awk -F: '/a|b/ {n++} END {print n}' f",
  "awk 'BEGIN { x = 4 / 2; print x }'",
  'grep -rn "TODO" src | head',
  'mkdir -p a/b && cp x a/b/ && mv a/b/x a/b/y && rm -rf a',
  'curl -sSL https://example.com -o page.html',
  'go build ./... && go test ./...',
  'echo "$HOME" ${USER:-none} $((1 + 2))',
  'if [ -f x ]; then cat x; else echo none; fi',
  'case "$1" in a) ls;; *) echo other;; esac',
  'while read -r line; do echo "$line"; done < f',
  '{ ls; pwd; } > out',
  '(cd sub; ls)',
  'ls # $(sh) in a comment',
  'echo "\\$(sh)"',
  'test -d x || mkdir x',
  'diff <(sort a) <(sort b)',
  'echo `date`',
  'sha256sum *.tgz > sums.txt',
  'printf "%s\\n" a b',
  'unzip -o a.zip -d out',
  'read -r a b < f',
  '! grep -q x f',
  'ls &\nwait',
  'echo a \\\n  b',
  ': > empty.txt',
  'sort --check f',
  'tr a-z A-Z < f | tee out',
  '"echo" hi',
  'l\\s',
  "'ls'",
];

const DENIED: readonly (readonly [string, DenyReason, string])[] = [
  // substitutions and every other command position
  ['echo $(sh)', 'not_allowed', 'sh'],
  ['echo "$(sh)"', 'not_allowed', 'sh'],
  ['echo `sh`', 'not_allowed', 'sh'],
  ['echo $(echo $(sh))', 'not_allowed', 'sh'],
  ['cat <(sh)', 'not_allowed', 'sh'],
  ['tee >(sh)', 'not_allowed', 'sh'],
  ['cat <<EOF\n$(sh)\nEOF', 'not_allowed', 'sh'],
  ['cat <<EOF\n${x:-$(sh)}\nEOF', 'not_allowed', 'sh'],
  ['cat <<EOF | sh\nx\nEOF', 'not_allowed', 'sh'],
  ['(sh)', 'not_allowed', 'sh'],
  ['{ sh; }', 'not_allowed', 'sh'],
  ['ls && sh', 'not_allowed', 'sh'],
  ['ls || sh', 'not_allowed', 'sh'],
  ['ls; sh', 'not_allowed', 'sh'],
  ['ls\nsh', 'not_allowed', 'sh'],
  ['ls | sh', 'not_allowed', 'sh'],
  ['ls |& sh', 'not_allowed', 'sh'],
  ['ls &\nsh', 'not_allowed', 'sh'],
  ['curl x | sh', 'not_allowed', 'sh'],
  ['X=$(sh) ls', 'not_allowed', 'sh'],
  ['X=$(sh)', 'not_allowed', 'sh'],
  ['export X=$(sh)', 'not_allowed', 'sh'],
  ['ls > $(sh)', 'not_allowed', 'sh'],
  ['ls 2>"$(sh)"', 'not_allowed', 'sh'],
  ['ls <<< "$(sh)"', 'not_allowed', 'sh'],
  ['echo $(( $(sh) + 1 ))', 'not_allowed', 'sh'],
  ['[[ $(sh) ]]', 'not_allowed', 'sh'],
  ['[ -n "$(sh)" ]', 'not_allowed', 'sh'],
  ['if sh; then ls; fi', 'not_allowed', 'sh'],
  ['if ls; then sh; fi', 'not_allowed', 'sh'],
  ['if ls; then ls; else sh; fi', 'not_allowed', 'sh'],
  ['while sh; do ls; done', 'not_allowed', 'sh'],
  ['until ls; do sh; done', 'not_allowed', 'sh'],
  ['for x in $(sh); do ls; done', 'not_allowed', 'sh'],
  ['for x in a; do sh; done', 'not_allowed', 'sh'],
  ['case x in a) sh;; esac', 'not_allowed', 'sh'],
  ['case $(sh) in a) ls;; esac', 'not_allowed', 'sh'],
  ['a=(1 $(sh))', 'not_allowed', 'sh'],
  ['a[$(sh)]=1', 'not_allowed', 'sh'],
  ['echo ${x:-$(sh)}', 'not_allowed', 'sh'],
  ['! sh', 'not_allowed', 'sh'],
  ['time sh', 'not_allowed', 'sh'],
  // functions: refused, whatever the body
  ['f() { sh; }', 'function_definition', 'f'],
  ['ls() { sh; }; ls', 'function_definition', 'ls'],
  ['function g { ls; }', 'function_definition', 'g'],
  // names only known at run time
  ['$a', 'dynamic_name', '$a'],
  ['${X}', 'dynamic_name', '${X}'],
  ["$'\\x73h'", 'dynamic_name', "$'\\x73h'"],
  ['$"sh"', 'dynamic_name', '$"sh"'],
  ['/bin/s?', 'dynamic_name', '/bin/s?'],
  ['*', 'dynamic_name', '*'],
  ['~/bin/ls', 'dynamic_name', '~/bin/ls'],
  ['$(echo sh)', 'dynamic_name', '$(echo sh)'],
  ['`echo sh`', 'dynamic_name', '`echo sh`'],
  ['ls"$x"', 'dynamic_name', 'ls"$x"'],
  // quoting is undone before the check
  ['"s"h', 'not_allowed', 'sh'],
  ['\\sh', 'not_allowed', 'sh'],
  ["'sh' -c ls", 'not_allowed', 'sh'],
  ["s''h", 'not_allowed', 'sh'],
  // builtins that run strings or rebind names
  ['eval ls', 'forbidden_builtin', 'eval'],
  ['exec ls', 'forbidden_builtin', 'exec'],
  ['. ./x', 'forbidden_builtin', '.'],
  ['source x', 'forbidden_builtin', 'source'],
  ['command sh', 'forbidden_builtin', 'command'],
  ['builtin eval', 'forbidden_builtin', 'builtin'],
  ['alias ls=sh', 'forbidden_builtin', 'alias'],
  ['unalias ls', 'forbidden_builtin', 'unalias'],
  ['trap "sh" EXIT', 'forbidden_builtin', 'trap'],
  ['hash -p ./sh ls', 'forbidden_builtin', 'hash'],
  ['enable -f x.so y', 'forbidden_builtin', 'enable'],
  ['fc -s', 'forbidden_builtin', 'fc'],
  ['mapfile -C sh a', 'forbidden_builtin', 'mapfile'],
  ['coproc ls', 'forbidden_builtin', 'coproc'],
  // checked wrappers: the program they run is checked
  ['env sh', 'not_allowed', 'sh'],
  ['env -i FOO=1 sh', 'not_allowed', 'sh'],
  ['env -S sh', 'unsafe_argument', '-S'],
  ['env PATH=. ls', 'sensitive_variable', 'PATH'],
  ['env "$x" ls', 'dynamic_argument', '"$x"'],
  ['xargs sh', 'not_allowed', 'sh'],
  ['xargs -0 sh -c x', 'not_allowed', 'sh'],
  ['xargs --process-slot-var=LD_PRELOAD ls', 'unsafe_argument', '--process-slot-var=LD_PRELOAD'],
  ['xargs find .', 'dynamic_argument', 'xargs (standard input)'],
  ['timeout 5 sh', 'not_allowed', 'sh'],
  ['timeout -s KILL 5 sh', 'not_allowed', 'sh'],
  ['nice -n 5 sh', 'not_allowed', 'sh'],
  ['nice -5 sh', 'not_allowed', 'sh'],
  ['nohup sh', 'not_allowed', 'sh'],
  ['stdbuf -oL sh', 'not_allowed', 'sh'],
  ['time -p sh', 'not_allowed', 'sh'],
  ['env timeout 5 nice sh', 'not_allowed', 'sh'],
  ['env eval ls', 'forbidden_builtin', 'eval'],
  // wrappers that cannot be checked
  ['busybox sh', 'wrapper', 'busybox'],
  ['sudo ls', 'wrapper', 'sudo'],
  ['doas ls', 'wrapper', 'doas'],
  ['su -c ls', 'wrapper', 'su'],
  ['chroot / ls', 'wrapper', 'chroot'],
  ['setsid ls', 'wrapper', 'setsid'],
  ['strace ls', 'wrapper', 'strace'],
  ['watch ls', 'wrapper', 'watch'],
  ['flock f ls', 'wrapper', 'flock'],
  ['parallel ls', 'wrapper', 'parallel'],
  ['script -c ls', 'wrapper', 'script'],
  ['unbuffer ls', 'wrapper', 'unbuffer'],
  ['ionice ls', 'wrapper', 'ionice'],
  ['taskset 1 ls', 'wrapper', 'taskset'],
  // not on the list
  ['bash -c ls', 'not_allowed', 'bash'],
  ['dash', 'not_allowed', 'dash'],
  ['nc -l 1234', 'not_allowed', 'nc'],
  ['ssh host', 'not_allowed', 'ssh'],
  ['perl -e 1', 'not_allowed', 'perl'],
  ['npm test', 'not_allowed', 'npm'],
  ['iptables -L', 'not_allowed', 'iptables'],
  ['docker ps', 'not_allowed', 'docker'],
  ['make all', 'not_allowed', 'make'],
  ['""', 'not_allowed', ''],
  // allowed programs used to run commands
  ['find . -exec sh {} \\;', 'unsafe_argument', '-exec'],
  ['find . -execdir ls \\;', 'unsafe_argument', '-execdir'],
  ['find . -ok rm {} \\;', 'unsafe_argument', '-ok'],
  ['find . >/dev/null -exec sh {} \\;', 'unsafe_argument', '-exec'],
  ['find . $x sh', 'dynamic_argument', '$x'],
  ["sed 's/a/b/e' f", 'unsafe_argument', "'s/a/b/e'"],
  ["sed -e '1e id' f", 'unsafe_argument', "'1e id'"],
  ['sed -f s.sed f', 'unsafe_argument', '-f'],
  ['sed "$s" f', 'dynamic_argument', '"$s"'],
  ['awk \'BEGIN{system("sh")}\'', 'unsafe_argument', '\'BEGIN{system("sh")}\''],
  ['awk \'{print | "sh"}\'', 'unsafe_argument', '\'{print | "sh"}\''],
  ['awk \'BEGIN{"id" | getline}\'', 'unsafe_argument', '\'BEGIN{"id" | getline}\''],
  ['awk -f p.awk f', 'unsafe_argument', '-f'],
  ['awk "$p" f', 'dynamic_argument', '"$p"'],
  ['git -c core.pager=sh log', 'unsafe_argument', '-c'],
  ['git --exec-path=. status', 'unsafe_argument', '--exec-path=.'],
  ["git config alias.x '!sh'", 'unsafe_argument', 'alias.x'],
  ['git clone -u sh repo', 'unsafe_argument', '-u'],
  ['git submodule foreach ls', 'unsafe_argument', 'foreach'],
  ['git bisect run ls', 'unsafe_argument', 'run'],
  ['git rebase -x ls main', 'unsafe_argument', '-x'],
  ['git difftool --extcmd=sh', 'unsafe_argument', '--extcmd=sh'],
  ['git fetch --upload-p=sh x', 'unsafe_argument', '--upload-p=sh'],
  ['tar xf a.tar --to-command=sh', 'unsafe_argument', '--to-command=sh'],
  ['tar -I sh -xf a.tar', 'unsafe_argument', '-I'],
  ['tar xIf sh a.tar', 'unsafe_argument', 'xIf'],
  ['tar czf out.tgz *', 'dynamic_argument', '*'],
  ['sort --compress-program=sh f', 'unsafe_argument', '--compress-program=sh'],
  ['split --filter=sh f', 'unsafe_argument', '--filter=sh'],
  ['zip -TT sh a.zip f', 'unsafe_argument', '-TT'],
  ['wget --use-askpass=sh x', 'unsafe_argument', '--use-askpass=sh'],
  ['wget -e use_askpass=sh x', 'unsafe_argument', '-e'],
  // variables that choose or inject programs
  ['PATH=. ls', 'sensitive_variable', 'PATH'],
  ['export PATH=.', 'sensitive_variable', 'PATH'],
  ['"export" PATH=.', 'sensitive_variable', 'PATH'],
  ['LD_PRELOAD=./x.so ls', 'sensitive_variable', 'LD_PRELOAD'],
  ['GIT_SSH_COMMAND=sh git fetch', 'sensitive_variable', 'GIT_SSH_COMMAND'],
  ['BASH_ENV=x ls', 'sensitive_variable', 'BASH_ENV'],
  ['read PATH', 'sensitive_variable', 'PATH'],
  ['printf -v PATH .', 'sensitive_variable', 'PATH'],
  ['for PATH in .; do ls; done', 'sensitive_variable', 'PATH'],
  ['echo $((PATH=1))', 'sensitive_variable', 'PATH'],
  ['let PATH=1', 'sensitive_variable', 'PATH'],
  ['unset PATH', 'sensitive_variable', 'PATH'],
  ['declare -n r=PATH', 'unsafe_argument', '-n'],
  // where bash (the parser) and sh (the shell) read the same text differently
  ['((sh))', 'unsupported_syntax', '(('],
  ['[ a && sh ]', 'unsupported_syntax', '&&'],
  ['[[ -f x || sh ]]', 'unsupported_syntax', '||'],
  ['cat <<EOF\n`sh`\nEOF', 'unsupported_syntax', '`'],
  ['echo "${x:-\'$(sh)\'}"', 'unsupported_syntax', '$('],
  ['echo `echo \\`sh\\``', 'unsupported_syntax', '`'],
  ["echo $'\\' ; sh ; x'", 'unsupported_syntax', "$'\\' ; sh ; x'"],
  ['ls a\\\nb', 'unsupported_syntax', '\\'],
  ['ls\r', 'unsupported_syntax', '\\u000d'],
  // parse errors
  ['ls (', 'parse_error', '('],
  ["echo 'abc", 'parse_error', "'abc"],
  ['echo "abc', 'parse_error', '"abc'],
  ['if ls; then', 'parse_error', 'fi'],
  ['$(ls', 'parse_error', ')'],
  ['{ls,sh}', 'parse_error', '{ls,sh}'],
  ['cat <<E"O"F\n$(sh)\nEOF', 'parse_error', 'EOF'],
];

t.test('the table covers at least 120 commands', async (t) => {
  t.ok(ALLOWED.length + DENIED.length >= 120, `${ALLOWED.length + DENIED.length} cases`);
});

let checker: CommandChecker;
t.before(async () => {
  checker = await createCommandChecker();
});

function summary(result: CheckResult): Expected {
  return result.ok ? 'ok' : [result.reason, result.name];
}

t.test('ordinary commands stay allowed', async (t) => {
  for (const command of ALLOWED) {
    const result = checker.check(command);
    t.same(summary(result), 'ok', JSON.stringify(command), { result });
  }
});

t.test('every bypass family is refused with its reason and offending name', async (t) => {
  for (const [command, reason, name] of DENIED) {
    t.same(summary(checker.check(command)), [reason, name], JSON.stringify(command));
  }
});

t.test('an allowed command reports what it runs, wrapped programs included', async (t) => {
  t.same(checker.check('cat a | grep b | sort | head -5'), {
    ok: true,
    commands: ['cat', 'grep', 'sort', 'head'],
  });
  t.same(checker.check('env -i FOO=1 timeout 5 ls'), {
    ok: true,
    commands: ['env', 'timeout', 'ls'],
  });
  t.same(checker.check('x=$(ls | wc -l); echo "$x"'), { ok: true, commands: ['ls', 'wc', 'echo'] });
});

t.test('positions point into the original string, with 1-based line and column', async (t) => {
  const at = (command: string) => {
    const r = checker.check(command);
    return r.ok ? null : r.position;
  };
  t.same(at('echo $(sh)'), { index: 7, line: 1, column: 8 });
  t.same(at('ls\nsh'), { index: 3, line: 2, column: 1 });
  t.same(at('cat <<EOF\nabc $(sh)\nEOF'), { index: 16, line: 2, column: 7 });
  t.same(at('cat <<EOF\n`sh`\nEOF'), { index: 10, line: 2, column: 1 });
  t.same(at('ls; ls;\n  ls | env sh'), { index: 19, line: 2, column: 12 });
  t.same(at('find . -name x -exec rm {} +'), { index: 15, line: 1, column: 16 });
  // Offsets are JavaScript string indices, so text before the name may be non-ASCII.
  t.same(at('echo "é😀"; sh'), { index: 12, line: 1, column: 13 });
});

t.test('when several positions are refused, the first in the text is reported', async (t) => {
  const r = checker.check('f() { sh; }; eval x');
  t.same(summary(r), ['function_definition', 'f']);
  t.same(summary(checker.check('ls $(bash) $(sh)')), ['not_allowed', 'bash']);
});

t.test('a parse error wins over policy refusals elsewhere', async (t) => {
  t.same(summary(checker.check('sh; ls (')), ['parse_error', '(']);
});

t.test('limits fail closed', async (t) => {
  const nested = `echo ${'$('.repeat(10_000)}ls${')'.repeat(10_000)}`;
  t.same(summary(checker.check(nested)), ['limit_exceeded', 'maxDepth']);
  const long = `echo ${'a'.repeat(DEFAULT_COMMAND_CHECK_LIMITS.maxCommandLength)}`;
  t.same(summary(checker.check(long)), ['limit_exceeded', 'maxCommandLength']);
  const many = Array(1_001).fill('ls').join(';');
  t.same(summary(checker.check(many)), ['limit_exceeded', 'maxCommandPositions']);
  const deepParens = `${'('.repeat(20_000)}ls${')'.repeat(20_000)}`;
  t.equal(checker.check(deepParens).ok, false);

  const fewNodes = await createCommandChecker({ limits: { maxNodes: 10 } });
  t.same(summary(fewNodes.check('ls -a -b -c -d -e -f -g')), ['limit_exceeded', 'maxNodes']);
  const fewPositions = await createCommandChecker({ limits: { maxCommandPositions: 2 } });
  t.same(summary(fewPositions.check('ls; ls')), 'ok');
  t.same(summary(fewPositions.check('ls; ls; ls')), ['limit_exceeded', 'maxCommandPositions']);
  const shallow = await createCommandChecker({ limits: { maxDepth: 8 } });
  t.same(summary(shallow.check('echo $(echo $(echo $(ls)))')), ['limit_exceeded', 'maxDepth']);
});

t.test('denialPayload gives the command_not_allowed payload', async (t) => {
  const r = checker.check('ls | bash');
  if (r.ok) throw new Error('expected a refusal');
  const payload = denialPayload(r, checker);
  t.same(payload, {
    name: 'bash',
    position: { index: 5, line: 1, column: 6 },
    reason: 'not_allowed',
    allowed: [...checker.allowed].sort(),
  });
  t.ok(payload.allowed.includes('python3') && !payload.allowed.includes('bash'));
  t.match(r.message, /shell/);
});

t.test(
  'operators add names, but never shells, string-evaluating builtins or wrappers',
  async (t) => {
    const extended = await createCommandChecker({ extraAllowed: ['make', 'perl'] });
    t.same(extended.check('make all && perl -e 1'), { ok: true, commands: ['make', 'perl'] });
    t.same(summary(checker.check('make all')), ['not_allowed', 'make'], 'defaults unchanged');
    t.same(summary(extended.check('make all && eval x')), ['forbidden_builtin', 'eval']);

    for (const name of ['eval', 'sh', 'bash', 'sudo', 'exec', 'busybox', 'mapfile', 'zsh']) {
      await t.rejects(createCommandChecker({ extraAllowed: [name] }), /can never be allowed/, name);
    }
    for (const name of ['../x', '.', 'a b', '']) {
      await t.rejects(createCommandChecker({ extraAllowed: [name] }), /not a plain program name/);
    }
    t.same(validateExtraAllowed(['make', 'eval', 'a b']).length, 2);
    t.same(validateExtraAllowed(['make', 'rg']), []);
    t.same(validateExtraAllowed(['env', 'xargs']), [], 'checked wrappers are allowed anyway');
  },
);
