import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import {
  type CliInvocation,
  connection,
  execLine,
  parseCli,
  UsageError,
} from '../../nodes/cli/cli-args.js';
import {
  execExitCode,
  formatBytes,
  formatCommands,
  formatError,
  formatListing,
  formatOutputs,
  formatProgress,
  formatRuns,
  table,
  USAGE,
} from '../../nodes/cli/cli-output.js';
import {
  formatApproval,
  formatConsentRequests,
  formatInvocations,
  formatWorkers,
} from '../../nodes/cli/worker-output.js';

const env = { MEMQL_URL: 'http://127.0.0.1:8080', MEMQL_TOKEN: 'tok' };
const cmd = (...argv: string[]) => parseCli(argv, env).command;

function usageError(argv: string[], pattern: RegExp | string, e: Record<string, string> = env) {
  try {
    parseCli(argv, e);
  } catch (err) {
    return err instanceof UsageError && new RegExp(pattern).test(err.message);
  }
  return false;
}

t.test('exec --needs and --os: the environment hint, its values checked', async (t) => {
  t.ok(usageError(['exec', 'r1', '--needs', 'screen', '--', 'x'], '"screen" is not a need'));
  t.ok(usageError(['exec', 'r1', '--os', 'macos', '--', 'x'], '"macos" is not an OS'));
});

t.test('every subcommand parses into its command', async (t) => {
  const table: [string[], CliInvocation['command']][] = [
    [[], { kind: 'help', missingCommand: true }],
    [['help'], { kind: 'help' }],
    [['--help'], { kind: 'help' }],
    [['runs', 'get', 'r1', '-h'], { kind: 'help' }],
    [['runs', 'create'], { kind: 'runs-create' }],
    [
      ['runs', 'create', '--conversation', 'c9', '--retention-ms', '60000'],
      { kind: 'runs-create', conversationId: 'c9', retentionMs: 60000 },
    ],
    [['runs', 'get', 'r1'], { kind: 'runs-get', runId: 'r1' }],
    [['runs', 'end', 'r1', 'abandoned'], { kind: 'runs-end', runId: 'r1', status: 'abandoned' }],
    [['runs', 'delete', 'r1'], { kind: 'runs-delete', runId: 'r1' }],
    [
      ['exec', 'r1', '--', 'echo hi | wc -c'],
      { kind: 'exec', runId: 'r1', command: 'echo hi | wc -c' },
    ],
    [
      ['exec', 'r1', '--', 'ls -la --color=never'],
      { kind: 'exec', runId: 'r1', command: 'ls -la --color=never' },
    ],
    [
      [
        'exec',
        'r1',
        '--needs',
        'display,gpu',
        '--needs',
        'display',
        '--os',
        'darwin',
        '--',
        'open x',
      ],
      {
        kind: 'exec',
        runId: 'r1',
        command: 'open x',
        environment: { os: 'darwin', needs: ['display', 'gpu'] },
      },
    ],
    [
      ['exec', '--timeout-ms', '500', 'r1', '--cwd', 'src', '--', 'exit', '3'],
      { kind: 'exec', runId: 'r1', command: 'exit 3', timeoutMs: 500, cwd: 'src' },
    ],
    [
      ['exec', 'r1', '--output', 'out/a.pdf', '--output', 'b.txt', '--', 'make'],
      {
        kind: 'exec',
        runId: 'r1',
        command: 'make',
        outputs: [{ path: 'out/a.pdf' }, { path: 'b.txt' }],
      },
    ],
    [['commands', 'get', 'c1'], { kind: 'commands-get', commandId: 'c1' }],
    [['runs', 'ls'], { kind: 'runs-list' }],
    [
      ['runs', 'list', '--status', 'running', '--limit', '2', '--before', 'r9'],
      { kind: 'runs-list', status: 'running', limit: 2, before: 'r9' },
    ],
    [['mcp'], { kind: 'mcp' }],
    [['commands', 'list', 'r1'], { kind: 'commands-list', runId: 'r1' }],
    [
      ['commands', 'list', 'r1', '--status', 'failed', '--limit', '5', '--before', 'c9'],
      { kind: 'commands-list', runId: 'r1', status: 'failed', limit: 5, before: 'c9' },
    ],
    [['fs', 'read', 'r1', 'a/b.txt'], { kind: 'fs-read', runId: 'r1', path: 'a/b.txt' }],
    [['fs', 'read', 'r1', 'a', '-o', 'x'], { kind: 'fs-read', runId: 'r1', path: 'a', out: 'x' }],
    [
      ['fs', 'write', 'r1', 'a', '--content', 'hello'],
      { kind: 'fs-write', runId: 'r1', path: 'a', source: { content: 'hello' }, append: false },
    ],
    [
      ['fs', 'write', 'r1', 'a', '--from', '-', '--append'],
      { kind: 'fs-write', runId: 'r1', path: 'a', source: { from: '-' }, append: true },
    ],
    [['fs', 'ls', 'r1'], { kind: 'fs-ls', runId: 'r1', path: '.', recursive: false }],
    [['fs', 'ls', 'r1', 'src', '-r'], { kind: 'fs-ls', runId: 'r1', path: 'src', recursive: true }],
    [['promote', 'r1', 'out/report.md'], { kind: 'promote', runId: 'r1', path: 'out/report.md' }],
    [
      ['promote', 'r1', 'a.bin', '--name', 'b.bin', '--content-type', 'application/x-foo'],
      {
        kind: 'promote',
        runId: 'r1',
        path: 'a.bin',
        name: 'b.bin',
        contentType: 'application/x-foo',
      },
    ],
    [['workspaces'], { kind: 'workspaces', all: false }],
    [['workspaces', '--all'], { kind: 'workspaces', all: true }],
    [['artifacts', 'list'], { kind: 'artifacts-list' }],
    [['artifacts', 'list', '--run', 'r1'], { kind: 'artifacts-list', runId: 'r1' }],
    [
      ['artifacts', 'download', 'a1'],
      { kind: 'artifacts-download', artifactId: 'a1', progress: false },
    ],
    [
      ['artifacts', 'download', 'a1', '--out', 'f', '--progress'],
      { kind: 'artifacts-download', artifactId: 'a1', out: 'f', progress: true },
    ],
    [['fleet'], { kind: 'fleet' }],
    [['build', 'r1'], { kind: 'build', runId: 'r1' }],
    [
      ['build', 'r1', '--ref', 'v1.2.0', '--script', 'dist'],
      { kind: 'build', runId: 'r1', ref: 'v1.2.0', script: 'dist' },
    ],
    [['workers', 'ls'], { kind: 'workers-list' }],
    [['workers', 'list'], { kind: 'workers-list' }],
    [
      ['workers', 'scope', 'laptop', 'observe'],
      { kind: 'workers-scope', workerId: 'laptop', scope: 'observe' },
    ],
    [
      ['workers', 'scope', 'laptop', 'none'],
      { kind: 'workers-scope', workerId: 'laptop', scope: 'none' },
    ],
    [['workers', 'kill-switch', 'on'], { kind: 'workers-kill-switch', engaged: true }],
    [
      ['workers', 'kill-switch', 'off', '--worker', 'laptop'],
      { kind: 'workers-kill-switch', engaged: false, workerId: 'laptop' },
    ],
    [['workers', 'invocations'], { kind: 'workers-invocations' }],
    [
      ['workers', 'invocations', '--run', 'r1', '--worker', 'laptop'],
      { kind: 'workers-invocations', runId: 'r1', workerId: 'laptop' },
    ],
    [['consent', 'ls'], { kind: 'consent-list' }],
    [['consent', 'ls', '--status', 'denied'], { kind: 'consent-list', status: 'denied' }],
    [['consent', 'approve', 'csr_1'], { kind: 'consent-approve', requestId: 'csr_1' }],
    [
      ['consent', 'approve', 'csr_1', '--scope', 'full'],
      { kind: 'consent-approve', requestId: 'csr_1', scope: 'full' },
    ],
    [['consent', 'deny', 'csr_1'], { kind: 'consent-deny', requestId: 'csr_1' }],
  ];
  for (const [argv, expected] of table) t.same(cmd(...argv), expected, argv.join(' '));
});

t.test('options after -- belong to the exec command, not to memql', async (t) => {
  t.same(cmd('exec', 'r1', '--', 'grep', '-r', '--json', 'x', '.'), {
    kind: 'exec',
    runId: 'r1',
    command: 'grep -r --json x .',
  });
  t.equal(parseCli(['exec', 'r1', '--', 'ls', '--json'], env).global.json, false);
});

t.test('exec: one word is a shell line; several are an argv, quoted word by word', async (t) => {
  const table: [string[], string][] = [
    [['cat a | wc -l'], 'cat a | wc -l'],
    [['grep', 'hello world', 'notes.txt'], "grep 'hello world' notes.txt"],
    [['printf', '%s\\n', 'a b'], "printf '%s\\n' 'a b'"],
    [['echo', "it's"], `echo "it's"`],
    [['echo', 'hi', '|', 'wc', '-c'], 'echo hi \\| wc -c'],
    [['echo', '$HOME', '`id`', '$(id)'], 'echo \\$HOME \\`id\\` \\$\\(id\\)'],
  ];
  for (const [words, line] of table) {
    t.equal(execLine(words), line, words.join(' '));
    t.same(cmd('exec', 'r1', '--', ...words), { kind: 'exec', runId: 'r1', command: line });
  }
});

t.test('global options: flags win over the environment; defaults', async (t) => {
  const g = parseCli(['--json', 'workspaces', '--url', 'http://h:1', '--agent', 'me'], env).global;
  t.same(g, { url: 'http://h:1', token: 'tok', json: true, agentId: 'me', taskId: 'cli' });
  const bare = parseCli(['workspaces'], {}).global;
  t.same(bare, {
    url: undefined,
    token: undefined,
    json: false,
    agentId: 'memql-cli',
    taskId: 'cli',
  });
  t.same(parseCli(['workspaces'], { MEMQL_URL: '', MEMQL_TOKEN: '' }).global.url, undefined);
});

t.test('usage errors say what is wrong', async (t) => {
  const cases: [string[], string][] = [
    [['nope'], 'unknown command "nope"'],
    [['runs'], 'runs: expected create, list, get, end or delete'],
    [['runs', 'get'], 'runs get: missing <runId>'],
    [['runs', 'get', 'a', 'b'], 'runs get: unexpected argument "b"'],
    [['runs', 'end', 'r1', 'done'], 'status must be succeeded, failed, cancelled or abandoned'],
    [['runs', 'end', 'r1'], 'missing <status>'],
    [['exec', 'r1'], 'exec: missing the command after --'],
    [['exec', 'r1', 'cat', 'notes.txt'], 'exec: the command goes after --'],
    [['exec', 'r1', 'ls', '--', '-la'], 'exec: "ls" stands before --'],
    [['exec'], 'exec: missing <runId>'],
    [['exec', 'r1', '--timeout-ms', '0', '--', 'true'], '--timeout-ms expects a positive integer'],
    [['fs', 'write', 'r1', 'a'], 'exactly one of --from'],
    [['fs', 'write', 'r1', 'a', '--from', 'x', '--content', 'y'], 'exactly one of --from'],
    [['fs', 'cp'], 'fs: expected read, write or ls'],
    [['artifacts', 'get'], 'artifacts: expected list or download'],
    [['commands', 'show', 'c1'], 'commands: expected get or list'],
    [['commands', 'list'], 'commands list: missing <runId>'],
    [['runs', 'ls', '--status', 'done'], 'runs ls: --status must be running, succeeded'],
    [['runs', 'ls', 'r1'], 'runs ls: unexpected argument "r1"'],
    [['mcp', 'x'], 'mcp: unexpected argument "x"'],
    [['commands', 'list', 'r1', '--limit', '0'], '--limit expects a positive integer'],
    [['commands', 'get', 'c1', '--status', 'failed'], '--status does not apply to "commands get"'],
    [['workspaces', '-r'], '--recursive does not apply to "workspaces"'],
    [['runs', 'get', 'r1', '--out', 'x'], '--out does not apply to "runs get"'],
    [['workspaces', '--bogus'], "Unknown option '--bogus'"],
    [['fs', 'ls', 'r1', '--', 'x'], '"--" is only for exec'],
    [['build'], 'build: missing <runId>'],
    [['build', 'r1', 'main'], 'build: unexpected argument "main"'],
    [['build', 'r1', '--cwd', 'x'], '--cwd does not apply to "build"'],
    [['workers'], 'workers: expected ls, scope, kill-switch or invocations'],
    [['workers', 'scope', 'laptop'], 'workers scope: missing <none\\|observe\\|full>'],
    [['workers', 'scope', 'laptop', 'admin'], 'the scope must be none, observe or full'],
    [['workers', 'kill-switch'], 'workers kill-switch: missing <on|off>'],
    [['workers', 'kill-switch', 'true'], 'expected on \\(computer use off\\) or off'],
    [['workers', 'ls', '--worker', 'x'], '--worker does not apply to "workers list"'],
    [['workers', 'scope', 'a', 'full', '--scope', 'full'], '--scope does not apply'],
    [['consent'], 'consent: expected ls, approve or deny'],
    [['consent', 'ls', '--status', 'open'], '--status must be pending, approved or denied'],
    [['consent', 'approve'], 'consent approve: missing <requestId>'],
    [['consent', 'approve', 'c1', '--scope', 'none'], '--scope must be observe or full'],
    [['consent', 'deny', 'c1', '--scope', 'full'], '--scope does not apply to "consent deny"'],
    [['consent', 'deny', 'c1', 'c2'], 'consent deny: unexpected argument "c2"'],
  ];
  for (const [argv, message] of cases)
    t.ok(usageError(argv, message), `${argv.join(' ')} → ${message}`);
});

t.test('connection needs an http address and a token, and says where to get them', async (t) => {
  t.same(connection(parseCli(['fleet'], env).global), {
    baseUrl: 'http://127.0.0.1:8080',
    token: 'tok',
  });
  const check = (e: Record<string, string>, pattern: string) => {
    try {
      connection(parseCli(['fleet'], e).global);
      return false;
    } catch (err) {
      return err instanceof UsageError && err.message.includes(pattern);
    }
  };
  t.ok(check({ MEMQL_TOKEN: 't' }, 'set MEMQL_URL (npm start prints it)'));
  t.ok(check({ MEMQL_URL: 'http://x' }, 'set MEMQL_TOKEN'));
  t.ok(
    check(
      { MEMQL_URL: '127.0.0.1:8080', MEMQL_TOKEN: 't' },
      'must be an http:// or https:// address',
    ),
  );
});

t.test('exec exit codes follow how the command ended', async (t) => {
  const base = {
    exitCode: null as number | null,
    signal: null as string | null,
    timedOut: false,
    cancelled: false,
    oomKilled: false,
  };
  const table: [Partial<typeof base> & Record<string, unknown>, number][] = [
    [{ exitCode: 0 }, 0],
    [{ exitCode: 3 }, 3],
    [{ exitCode: 255 }, 255],
    [{ timedOut: true, signal: 'SIGKILL' }, 124],
    [{ cancelled: true, signal: 'SIGKILL' }, 130],
    [{ oomKilled: true, signal: 'SIGKILL' }, 137],
    [{ signal: 'SIGTERM' }, 143],
    [{ signal: 'SIGSEGV' }, 139],
    [{ signal: 'SIGWHAT' }, 125],
    [{}, 125],
  ];
  for (const [payload, code] of table)
    t.equal(execExitCode({ ...base, ...payload }), code, JSON.stringify(payload));
});

t.test('errors print their code once, the message, and a hint', async (t) => {
  t.equal(
    formatError('not_found', 'not_found: run "r9" does not exist'),
    'error: not_found: run "r9" does not exist\nhint: the id is wrong or belongs to another user; list yours with "memql runs ls" or "memql artifacts list"\n',
  );
  t.equal(
    formatError('fetch_failed', 'dns'),
    'error: fetch_failed: dns\n',
    'no hint when there is none',
  );
  t.match(formatError('unauthenticated', 'unauthenticated: bad token'), /MEMQL_TOKEN/);
  t.match(formatError('unavailable', 'unavailable: cannot reach'), /MEMQL_URL/);
});

t.test('human formatting', async (t) => {
  t.equal(formatBytes(0), '0 B');
  t.equal(formatBytes(1023), '1023 B');
  t.equal(formatBytes(1536), '1.5 KiB');
  t.equal(formatBytes(12 * 1024 * 1024), '12.0 MiB');
  t.equal(formatProgress(3 << 20, 12 << 20), '3.0 MiB / 12.0 MiB  25%');
  t.equal(formatProgress(100, null), '100 B');
  t.equal(
    table(
      ['A', 'LONGER'],
      [
        ['xyz', '1'],
        ['y', ''],
      ],
    ),
    'A    LONGER\nxyz  1\ny\n',
  );
  t.equal(
    formatListing({
      path: '.',
      truncated: true,
      entries: [
        { path: 'src', type: 'directory', size: 4096, mtimeMs: 0 },
        { path: 'src/a.ts', type: 'file', size: 12, mtimeMs: 0 },
        { path: 'link', type: 'symlink', size: 3, mtimeMs: 0 },
      ],
    }),
    `d             src/\n-         12  src/a.ts\nl          3  link\n(more entries not shown)\n`,
  );
  t.equal(formatListing({ path: '.', truncated: false, entries: [] }), '');
  const command = {
    id: 'c2',
    runId: 'r1',
    callId: null,
    status: 'timed_out',
    exitCode: null,
    signal: 'SIGKILL',
    timedOut: true,
    cancelled: false,
    oomKilled: false,
    stdoutTruncated: false,
    stderrTruncated: false,
    durationMs: 500,
    errorCode: null,
    errorCategory: null,
    timeoutMs: 500,
    attempts: 1,
    queuedAt: '2030-01-01T00:00:01.000Z',
    startedAt: null,
    finishedAt: null,
  } as const;
  t.equal(
    formatCommands('r1', {
      commands: [command, { ...command, id: 'c1', callId: 'k', status: 'completed', exitCode: 0 }],
      nextBefore: 'c1',
    }),
    [
      'ID  CALL  STATUS     EXIT     DURATION  QUEUED',
      'c2  -     timed_out  SIGKILL  500 ms    2030-01-01T00:00:01.000Z',
      'c1  k     completed  0        500 ms    2030-01-01T00:00:01.000Z',
      '(older commands: memql commands list r1 --before c1)',
      '',
    ].join('\n'),
  );
  t.equal(formatCommands('r1', { commands: [], nextBefore: null }), 'no commands\n');
  const run = {
    id: 'run-2',
    status: 'running' as const,
    ownerUserId: 'u',
    conversationId: null,
    createdAt: '2030-01-01T00:00:02.000Z',
    endedAt: null,
    retentionExpiresAt: null,
    network: { allow: [], secrets: [] },
  };
  t.equal(
    formatRuns({
      runs: [run, { ...run, id: 'run-1', status: 'failed', conversationId: 'conv' }],
      nextBefore: 'run-1',
    }),
    [
      'ID     STATUS   CONVERSATION  CREATED',
      'run-2  running  -             2030-01-01T00:00:02.000Z',
      'run-1  failed   conv          2030-01-01T00:00:02.000Z',
      '(older runs: memql runs ls --before run-1)',
      '',
    ].join('\n'),
  );
  t.equal(formatRuns({ runs: [], nextBefore: null }), 'no runs\n');
  for (const word of [
    'runs create',
    'exec <runId>',
    'fs write',
    'artifacts download',
    '124 timed out',
  ]) {
    t.match(USAGE, word);
  }
});

t.test('docs/cli.md lists every command of the usage text', async (t) => {
  const readme = await readFile(
    resolve(dirname(fileURLToPath(import.meta.url)), '../../../docs/cli.md'),
    'utf8',
  );
  const forms = USAGE.split('\n')
    .filter((l) => l.startsWith('  memql '))
    .map((l) => l.trim().split(/\s{2,}/)[0]!);
  t.ok(forms.length >= 14);
  for (const form of forms) t.ok(readme.includes(form), form);
});

t.test('what became of each expected output, one line each', async (t) => {
  const text = formatOutputs([
    {
      path: 'out/a.pdf',
      artifact: {
        artifactId: 'art_1',
        name: 'a.pdf',
        contentType: 'application/pdf',
        size: 12,
        sha256: 'ab',
        path: 'out/a.pdf',
        runId: 'r1',
      },
    },
    { path: 'b.txt', error: { code: 'path_not_found', message: 'path_not_found: "b.txt" ...' } },
  ]);
  t.equal(
    text,
    'memql: output out/a.pdf: artifact art_1 (12 bytes)\n' +
      'memql: output b.txt not promoted: path_not_found: "b.txt" ...\n',
  );
});

t.test('worker hosts, consent requests and routing records as tables', async (t) => {
  const worker = {
    workerId: 'laptop',
    connected: true,
    os: 'darwin',
    provides: ['display', 'user_files'],
    version: '0.1.0',
    connectedAt: '2026-01-01T00:00:00.000Z',
    disconnectedAt: null,
    inFlight: 1,
    capacity: 2,
    scope: 'observe',
    killSwitch: false,
  } as const;
  const gone = {
    ...worker,
    workerId: 'desktop',
    connected: false,
    provides: [],
    disconnectedAt: '2026-01-02T00:00:00.000Z',
    capacity: null,
    inFlight: 0,
    scope: 'none',
    killSwitch: true,
  } as const;
  t.equal(
    formatWorkers({ killSwitch: false, workers: [worker, gone] }),
    [
      'kill switch: off',
      'WORKER   CONNECTED                            OS      PROVIDES            SCOPE    KILL SWITCH  LOAD  VERSION',
      'laptop   yes                                  darwin  display,user_files  observe  off          1/2   0.1.0',
      'desktop  no (since 2026-01-02T00:00:00.000Z)  darwin  -                   none     on           -     0.1.0',
      '',
    ].join('\n'),
  );
  t.match(formatWorkers({ killSwitch: true, workers: [] }), /ON for every worker[\s\S]*no workers/);
  const request = {
    id: 'csr_1',
    workerId: 'laptop',
    runId: 'r1',
    action: 'exec',
    needs: ['display'],
    requiredScope: 'full',
    heldScope: 'observe',
    summary: 'exec needing display',
    status: 'pending',
    createdAt: '2026-01-01T00:00:00.000Z',
    decidedAt: null,
    decidedScope: null,
  } as const;
  const listing = formatConsentRequests([request]);
  t.match(listing, /^ID\s+WORKER\s+RUN\s+ACTION\s+NEEDS\s+REQUIRED\s+HELD\s+STATUS\s+CREATED\n/);
  t.match(listing, /csr_1\s+laptop\s+r1\s+exec\s+display\s+full\s+observe\s+pending/);
  t.match(listing, /the user answers them, in the console/, 'says who answers');
  t.notMatch(listing, /memql /, 'and names no command a tool loop could run to answer');
  t.match(
    formatConsentRequests([{ ...request, status: 'approved', decidedScope: 'observe' }]),
    /approved \(observe\)/,
  );
  t.equal(formatConsentRequests([]), 'no consent requests\n');
  t.match(
    formatApproval({
      request: { ...request, status: 'approved', decidedScope: 'observe' },
      consent: { workerId: 'laptop', scope: 'observe', killSwitch: false, updatedAt: null },
      covers: false,
      message: 'approved at observe, which is recorded, but the call needs full',
    }),
    /^warning: approved at observe/,
  );
  const records = formatInvocations([
    {
      id: 'wiv_1',
      workerId: 'laptop',
      runId: 'r1',
      action: 'exec',
      callId: null,
      reroutedFrom: 'workbench',
      needs: ['display'],
      scope: 'full',
      status: 'failed',
      errorCode: 'command_not_allowed',
      startedAt: '2026-01-01T00:00:00.000Z',
      finishedAt: null,
    },
  ]);
  t.match(
    records,
    /wiv_1\s+r1\s+laptop\s+exec\s+workbench\s+display\s+full\s+failed \(command_not_allowed\)/,
  );
  t.equal(formatInvocations([]), 'no calls were sent to a worker\n');
});
