import t from 'tap';
import {
  ACTION_NAMES,
  type Envelope,
  type EnvelopeParseResult,
  envelopeToWire,
  MAX_COMMAND_CHARS,
  MAX_PATH_CHARS,
  MAX_PAYLOAD_CHARS,
  MAX_TIMEOUT_MS,
  parseEnvelope,
} from '../../src/contract/index.js';

const BASE = { runId: 'run-1', agentId: 'agent-1', taskId: 'task-1' };

function mustParse(input: unknown): Envelope {
  const result = parseEnvelope(input);
  if (!result.ok) throw new Error(`expected ok, got ${result.message}`);
  return result.envelope;
}

function mustFail(input: unknown): Exclude<EnvelopeParseResult, { ok: true }> {
  const result = parseEnvelope(input);
  if (result.ok) throw new Error(`expected failure, got ${JSON.stringify(result.envelope)}`);
  return result;
}

function problemFields(result: Exclude<EnvelopeParseResult, { ok: true }>): string[] {
  const payload = result.payload as { problems: { field: string }[] };
  return payload.problems.map((p) => p.field);
}

const PROC = 'proc-0b5e6f1c-2d3a-4b5c-8d9e-0f1a2b3c4d5e';

t.test('a valid call of every action parses, defaults applied', async (t) => {
  const cases: {
    action: string;
    args: Record<string, unknown>;
    expected: Record<string, unknown>;
  }[] = [
    {
      action: 'fs_write',
      args: { path: 'birds.md', content: '# Birds' },
      expected: { path: 'birds.md', content: '# Birds', encoding: 'utf8', append: false },
    },
    {
      action: 'fs_write',
      args: { path: 'bin/x', content: 'AAE=', encoding: 'base64', append: true, mode: '0755' },
      expected: { path: 'bin/x', content: 'AAE=', encoding: 'base64', append: true, mode: 0o755 },
    },
    {
      action: 'fs_write',
      args: { path: 'a', content: '', mode: '644' },
      expected: { path: 'a', content: '', encoding: 'utf8', append: false, mode: 0o644 },
    },
    {
      action: 'fs_read',
      args: { path: 'birds.md' },
      expected: { path: 'birds.md', encoding: 'utf8', offset: 0 },
    },
    {
      action: 'fs_read',
      args: { path: 'img.png', encoding: 'base64', offset: 10, length: 5 },
      expected: { path: 'img.png', encoding: 'base64', offset: 10, length: 5 },
    },
    { action: 'fs_list', args: {}, expected: { path: '.', recursive: false, limit: 1000 } },
    {
      action: 'fs_list',
      args: { path: 'src', recursive: true, limit: 10_000 },
      expected: { path: 'src', recursive: true, limit: 10_000 },
    },
    { action: 'fs_delete', args: { path: 'tmp' }, expected: { path: 'tmp', recursive: false } },
    { action: 'exec', args: { command: 'ls -la' }, expected: { command: 'ls -la' } },
    {
      action: 'exec',
      args: {
        command: 'python3 x.py',
        timeoutMs: MAX_TIMEOUT_MS,
        env: { _A1: 'v' },
        stdin: 'in',
        cwd: 'src',
      },
      expected: {
        command: 'python3 x.py',
        timeoutMs: MAX_TIMEOUT_MS,
        env: { _A1: 'v' },
        stdin: 'in',
        cwd: 'src',
      },
    },
    {
      action: 'fetch',
      args: { url: 'https://example.com/a?b=c', path: 'a.html', maxBytes: 1024, timeoutMs: 5000 },
      expected: {
        url: 'https://example.com/a?b=c',
        path: 'a.html',
        maxBytes: 1024,
        timeoutMs: 5000,
      },
    },
    {
      action: 'fetch',
      args: { url: 'http://example.com', path: 'a' },
      expected: { url: 'http://example.com', path: 'a' },
    },
    {
      action: 'promote_artifact',
      args: { path: 'out/report.md' },
      expected: { path: 'out/report.md', name: 'report.md' },
    },
    {
      action: 'promote_artifact',
      args: { path: 'out/r.md', name: 'Report.md', contentType: 'text/markdown; charset=utf-8' },
      expected: {
        path: 'out/r.md',
        name: 'Report.md',
        contentType: 'text/markdown; charset=utf-8',
      },
    },
    {
      action: 'process_start',
      args: { command: 'python3 -m http.server', cwd: 'site', env: { PORT: '8000' } },
      expected: { command: 'python3 -m http.server', cwd: 'site', env: { PORT: '8000' } },
    },
    { action: 'process_list', args: {}, expected: { running: false, limit: 50 } },
    {
      action: 'process_output',
      args: { processId: PROC },
      expected: { processId: PROC, stream: 'stdout', offset: 0, maxBytes: 65536, encoding: 'utf8' },
    },
    {
      action: 'process_write',
      args: { processId: PROC, stdin: 'x' },
      expected: { processId: PROC, stdin: 'x', eof: false },
    },
    {
      action: 'process_signal',
      args: { processId: PROC },
      expected: { processId: PROC, signal: 'SIGTERM' },
    },
    {
      action: 'process_wait',
      args: { processId: PROC, timeoutMs: 0 },
      expected: { processId: PROC, timeoutMs: 0 },
    },
    {
      action: 'process_resize',
      args: { processId: PROC, cols: 120, rows: 40 },
      expected: { processId: PROC, cols: 120, rows: 40 },
    },
    {
      action: 'process_shell',
      args: { cols: 80, rows: 24 },
      expected: { cols: 80, rows: 24 },
    },
    { action: 'version_list', args: {}, expected: { limit: 50, labelled: false } },
    {
      action: 'version_diff',
      args: { from: 2 },
      expected: { from: 2, limit: 1000 },
    },
    {
      action: 'version_checkpoint',
      args: { label: 'before-refactor' },
      expected: { label: 'before-refactor', remove: false },
    },
    {
      action: 'version_restore',
      args: { to: 'before-refactor' },
      expected: { to: 'before-refactor' },
    },
    { action: 'build', args: {}, expected: {} },
    {
      action: 'build',
      args: { ref: 'release/v1.2', script: 'build:prod' },
      expected: { ref: 'release/v1.2', script: 'build:prod' },
    },
  ];
  const seen = new Set<string>();
  for (const c of cases) {
    const envelope = mustParse({ ...BASE, action: c.action, args: c.args });
    seen.add(envelope.action);
    t.equal(envelope.action, c.action);
    t.strictSame(envelope.args, c.expected, `${c.action} ${JSON.stringify(c.args)}`);
    t.equal(envelope.runId, BASE.runId);
    t.equal(envelope.agentId, BASE.agentId);
    t.equal(envelope.taskId, BASE.taskId);
    t.notOk('callId' in envelope, 'no callId key when none given');
    t.notOk('environment' in envelope, 'no environment key when none given');
    const wire = JSON.parse(JSON.stringify(envelopeToWire(envelope)));
    t.strictSame(mustParse(wire), envelope, `${c.action}: the wire form parses back to itself`);
  }
  t.strictSame([...seen].sort(), [...ACTION_NAMES].sort(), 'every action is covered');
});

t.test('the wire form keeps callId and hint, and every permission mode', async (t) => {
  const envelope = mustParse({
    ...BASE,
    callId: 'call-7',
    environment: { os: 'linux', needs: ['gpu'] },
    action: 'fs_write',
    args: { path: 'a', content: 'x', mode: '0755' },
  });
  t.strictSame(mustParse(JSON.parse(JSON.stringify(envelopeToWire(envelope)))), envelope);
  for (const mode of [0, 0o7, 0o44, 0o644, 0o777]) {
    const e = mustParse({
      ...BASE,
      action: 'fs_write',
      args: { path: 'a', content: '', mode: mode.toString(8).padStart(4, '0') },
    });
    const back = mustParse(JSON.parse(JSON.stringify(envelopeToWire(e))));
    t.equal(back.action === 'fs_write' ? back.args.mode : null, mode, `mode ${mode.toString(8)}`);
  }
});

t.test('the envelope type narrows args by action', async (t) => {
  const envelope = mustParse({ ...BASE, action: 'exec', args: { command: 'pwd' } });
  if (envelope.action === 'exec') {
    // Compiles only if args is typed as the exec args.
    const command: string = envelope.args.command;
    t.equal(command, 'pwd');
  } else {
    t.fail('wrong action');
  }
});

t.test('callId passes through; the environment hint is parsed into its type', async (t) => {
  const withBoth = mustParse({
    ...BASE,
    action: 'fs_list',
    args: {},
    callId: 'call-9',
    environment: { os: 'darwin', needs: ['macos_tooling', 'gpu'] },
  });
  t.equal(withBoth.callId, 'call-9');
  t.strictSame(withBoth.environment, { os: 'darwin', needs: ['macos_tooling', 'gpu'] });
  // A malformed hint is its own code, never folded into invalid_arguments, and never a
  // mismatch: a typo must not read as "the workbench cannot do this".
  for (const [label, environment, field] of [
    ['a typo', { needs: ['macos-tooling'] }, 'environment.needs[0]'],
    ['null', null, 'environment'],
    ['a string', 'linux', 'environment'],
  ] as const) {
    const refused = parseEnvelope({ ...BASE, action: 'fs_list', args: {}, environment });
    t.equal(refused.ok ? null : refused.errorCode, 'invalid_environment_hint', label);
    t.ok(
      !refused.ok && refused.message.startsWith(`invalid_environment_hint: ${field}: `),
      `${label} names ${field}`,
    );
  }
  // A call with wrong arguments is fixed first: its hint is not looked at.
  const both = parseEnvelope({ ...BASE, action: 'fs_read', args: {}, environment: null });
  t.equal(both.ok ? null : both.errorCode, 'invalid_arguments');
});

t.test('an unknown action is named, with the accepted ones', async (t) => {
  const result = mustFail({ ...BASE, action: 'fs_move', args: {} });
  t.equal(result.errorCode, 'invalid_arguments');
  t.match(
    result.message,
    /^invalid_arguments: action: unknown action "fs_move"; expected one of fs_write, fs_read,/,
  );
  for (const name of ACTION_NAMES) t.match(result.message, name);
  t.strictSame(problemFields(result), ['action']);
});

t.test('a non-object envelope is refused', async (t) => {
  for (const input of [null, undefined, 'fs_write', 42, [], [BASE]]) {
    const result = mustFail(input);
    t.equal(result.errorCode, 'invalid_arguments');
    t.match(result.message, /^invalid_arguments: envelope: expected object, received /);
  }
});

type Case = [label: string, input: Record<string, unknown>, field: string, problem?: RegExp];

const w = (args: Record<string, unknown>) => ({
  ...BASE,
  action: 'fs_write',
  args: { path: 'a', content: 'x', ...args },
});
const r = (args: Record<string, unknown>) => ({
  ...BASE,
  action: 'fs_read',
  args: { path: 'a', ...args },
});
const l = (args: Record<string, unknown>) => ({ ...BASE, action: 'fs_list', args });
const x = (args: Record<string, unknown>) => ({
  ...BASE,
  action: 'exec',
  args: { command: 'ls', ...args },
});
const f = (args: Record<string, unknown>) => ({
  ...BASE,
  action: 'fetch',
  args: { url: 'https://e.com', path: 'p', ...args },
});
const p = (args: Record<string, unknown>) => ({
  ...BASE,
  action: 'promote_artifact',
  args: { path: 'a', ...args },
});
const without = (key: string) => {
  const copy: Record<string, unknown> = { ...BASE, action: 'fs_list', args: {} };
  delete copy[key];
  return copy;
};

const BAD_FIELDS: Case[] = [
  ['action missing', without('action'), 'action', /required \(expected string\)/],
  [
    'action not a string',
    { ...BASE, action: 7, args: {} },
    'action',
    /expected string, received number/,
  ],
  ['args missing', without('args'), 'args', /required/],
  [
    'args an array',
    { ...BASE, action: 'fs_list', args: [] },
    'args',
    /expected object, received array/,
  ],
  ['args null', { ...BASE, action: 'fs_list', args: null }, 'args', /received null/],
  ['runId missing', without('runId'), 'runId', /required/],
  ['runId empty', { ...BASE, runId: '', action: 'fs_list', args: {} }, 'runId', /empty/],
  ['runId ..', { ...BASE, runId: '..', action: 'fs_list', args: {} }, 'runId'],
  ['runId with slash', { ...BASE, runId: 'a/b', action: 'fs_list', args: {} }, 'runId'],
  ['runId with backslash', { ...BASE, runId: 'a\\b', action: 'fs_list', args: {} }, 'runId'],
  ['runId with NUL', { ...BASE, runId: 'a\0b', action: 'fs_list', args: {} }, 'runId'],
  [
    'runId too long',
    { ...BASE, runId: 'r'.repeat(129), action: 'fs_list', args: {} },
    'runId',
    /128/,
  ],
  ['agentId empty', { ...BASE, agentId: '', action: 'fs_list', args: {} }, 'agentId', /empty/],
  [
    'taskId a number',
    { ...BASE, taskId: 3, action: 'fs_list', args: {} },
    'taskId',
    /expected string/,
  ],
  ['taskId missing', without('taskId'), 'taskId', /required/],
  ['callId empty', { ...BASE, callId: '', action: 'fs_list', args: {} }, 'callId'],
  [
    'unknown envelope key',
    { ...BASE, action: 'fs_list', args: {}, authority: { class: 'system' } },
    'authority',
    /unknown key/,
  ],
  ['unknown args key', l({ bogus: 1 }), 'args.bogus', /unknown key/],
  [
    'fs_write path missing',
    { ...BASE, action: 'fs_write', args: { content: 'x' } },
    'args.path',
    /required \(expected string\)/,
  ],
  ['fs_write path a number', w({ path: 1 }), 'args.path', /expected string, received number/],
  ['fs_write path empty', w({ path: '' }), 'args.path', /empty/],
  [
    'fs_write path too long',
    w({ path: 'a'.repeat(MAX_PATH_CHARS + 1) }),
    'args.path',
    /at most 4096/,
  ],
  [
    'fs_write content missing',
    { ...BASE, action: 'fs_write', args: { path: 'a' } },
    'args.content',
    /required/,
  ],
  [
    'fs_write encoding unknown',
    w({ encoding: 'latin1' }),
    'args.encoding',
    /expected one of "utf8", "base64", received "latin1"/,
  ],
  ['fs_write append a string', w({ append: 'yes' }), 'args.append', /expected boolean/],
  ['fs_write mode not octal', w({ mode: '999' }), 'args.mode', /octal/],
  ['fs_write mode symbolic', w({ mode: 'rwxr-xr-x' }), 'args.mode', /octal/],
  ['fs_write mode with setuid', w({ mode: '4755' }), 'args.mode', /octal/],
  ['fs_write mode a number', w({ mode: 0o644 }), 'args.mode', /expected string/],
  ['fs_read offset negative', r({ offset: -1 }), 'args.offset', />= 0/],
  ['fs_read offset fractional', r({ offset: 0.5 }), 'args.offset', /integer/],
  ['fs_read length zero', r({ length: 0 }), 'args.length', /> 0/],
  ['fs_list limit zero', l({ limit: 0 }), 'args.limit', />= 1/],
  ['fs_list limit too big', l({ limit: 10_001 }), 'args.limit', /<= 10000/],
  ['fs_list recursive a string', l({ recursive: 'true' }), 'args.recursive', /expected boolean/],
  ['fs_delete path missing', { ...BASE, action: 'fs_delete', args: {} }, 'args.path', /required/],
  ['exec command empty', x({ command: '' }), 'args.command', /empty/],
  [
    'exec command too long',
    x({ command: 'a'.repeat(MAX_COMMAND_CHARS + 1) }),
    'args.command',
    /at most 65536/,
  ],
  ['exec timeout zero', x({ timeoutMs: 0 }), 'args.timeoutMs', /> 0/],
  [
    'exec timeout over an hour',
    x({ timeoutMs: MAX_TIMEOUT_MS + 1 }),
    'args.timeoutMs',
    /<= 3600000/,
  ],
  ['exec timeout fractional', x({ timeoutMs: 1.5 }), 'args.timeoutMs', /integer/],
  ['exec env name with digit first', x({ env: { '1A': 'x' } }), 'args.env["1A"]', /invalid key/],
  ['exec env name with dash', x({ env: { 'A-B': 'x' } }), 'args.env["A-B"]', /invalid key/],
  ['exec env name with =', x({ env: { 'A=B': 'x' } }), 'args.env["A=B"]', /invalid key/],
  ['exec env value a number', x({ env: { PORT: 80 } }), 'args.env.PORT', /expected string/],
  ['exec env an array', x({ env: ['A=1'] }), 'args.env', /expected record/],
  ['exec stdin a number', x({ stdin: 1 }), 'args.stdin', /expected string/],
  ['exec cwd empty', x({ cwd: '' }), 'args.cwd', /empty/],
  ['fetch url ftp', f({ url: 'ftp://e.com/x' }), 'args.url', /http/],
  ['fetch url file', f({ url: 'file:///etc/passwd' }), 'args.url', /http/],
  ['fetch url not a url', f({ url: 'not a url' }), 'args.url', /http/],
  [
    'fetch path missing',
    { ...BASE, action: 'fetch', args: { url: 'https://e.com' } },
    'args.path',
    /required/,
  ],
  ['fetch maxBytes zero', f({ maxBytes: 0 }), 'args.maxBytes', /> 0/],
  ['promote name with slash', p({ name: 'a/b' }), 'args.name', /file name/],
  ['promote name ..', p({ name: '..' }), 'args.name', /file name/],
  ['promote contentType bad', p({ contentType: 'markdown' }), 'args.contentType', /MIME/],
  [
    'build ref with space',
    { ...BASE, action: 'build', args: { ref: 'a b' } },
    'args.ref',
    /git ref/,
  ],
  [
    'build ref that git would read as an option',
    { ...BASE, action: 'build', args: { ref: '--orphan' } },
    'args.ref',
    /not starting with "-"/,
  ],
  [
    'build script that npm would read as an option',
    { ...BASE, action: 'build', args: { script: '-ws' } },
    'args.script',
    /not starting with "-"/,
  ],
  [
    'build unknown key',
    { ...BASE, action: 'build', args: { command: 'rm -rf /' } },
    'args.command',
    /unknown key/,
  ],
];

t.test('each bad field is named, with code invalid_arguments', async (t) => {
  for (const [label, input, field, problem] of BAD_FIELDS) {
    const result = mustFail(input);
    t.equal(result.errorCode, 'invalid_arguments', label);
    t.ok(
      result.message.startsWith('invalid_arguments: '),
      `${label}: message starts with the code`,
    );
    t.ok(
      result.message.includes(`${field}: `),
      `${label}: message names ${field}: ${result.message}`,
    );
    t.ok(problemFields(result).includes(field), `${label}: payload names ${field}`);
    if (problem) t.match(result.message, problem, `${label}: says what is wrong`);
  }
});

t.test('every problem is reported at once', async (t) => {
  const result = mustFail({
    ...BASE,
    agentId: '',
    action: 'fs_write',
    args: { path: 1, extra: true },
  });
  t.strictSame(problemFields(result).sort(), [
    'agentId',
    'args.content',
    'args.extra',
    'args.path',
  ]);
});

t.test(
  'an oversize payload is payload_too_large, unless something else is wrong too',
  async (t) => {
    const big = 'x'.repeat(MAX_PAYLOAD_CHARS + 1);
    const write = mustFail({ ...BASE, action: 'fs_write', args: { path: 'a', content: big } });
    t.equal(write.errorCode, 'payload_too_large');
    t.match(write.message, /^payload_too_large: args\.content: /);
    const stdin = mustFail({ ...BASE, action: 'exec', args: { command: 'cat', stdin: big } });
    t.equal(stdin.errorCode, 'payload_too_large');
    const alsoBad = mustFail({ ...BASE, action: 'fs_write', args: { content: big } });
    t.equal(alsoBad.errorCode, 'invalid_arguments');
    const alsoBadEnvelope = mustFail({
      ...BASE,
      taskId: '',
      action: 'fs_write',
      args: { path: 'a', content: big },
    });
    t.equal(alsoBadEnvelope.errorCode, 'invalid_arguments');
    // At the bound exactly is fine.
    const atBound = parseEnvelope({
      ...BASE,
      action: 'fs_write',
      args: { path: 'a', content: 'x'.repeat(MAX_PAYLOAD_CHARS) },
    });
    t.ok(atBound.ok);
  },
);

t.test('the input is not modified', async (t) => {
  const input = { ...BASE, action: 'fs_list', args: {} };
  mustParse(input);
  t.strictSame(input.args, {});
});

t.test('process actions refuse what cannot name a process or say nothing', async (t) => {
  const bad = (action: string, args: unknown) => mustFail({ ...BASE, action, args });
  t.match(bad('process_write', { processId: PROC }), {
    errorCode: 'invalid_arguments',
    message: /stdin, eof: true, or both/,
  });
  t.match(bad('process_output', { processId: 'proc-1' }), {
    errorCode: 'invalid_arguments',
    message: /processId from process_start or process_list/,
  });
  t.match(bad('process_signal', { processId: PROC, signal: 'SIGSEGV' }), {
    errorCode: 'invalid_arguments',
  });
  t.match(bad('process_wait', { processId: PROC, timeoutMs: 600_001 }), {
    errorCode: 'invalid_arguments',
  });
  t.match(bad('process_write', { processId: PROC, stdin: 'x'.repeat(32 * 1024 * 1024 + 1) }), {
    errorCode: 'payload_too_large',
  });
});
