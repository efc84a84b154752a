import t from 'tap';
import { execRequestOf, parseEnvelope, parseExecRequest } from '../../src/contract/index.js';

t.test('the exec request: the call fields that say what runs, and back from a row', async (t) => {
  const parsed = parseEnvelope({
    runId: 'run-1',
    agentId: 'a',
    taskId: 't',
    action: 'exec',
    args: { command: 'ls', cwd: 'src', env: { A: '1' }, stdin: 'in', timeoutMs: 5000 },
  });
  if (!parsed.ok || parsed.envelope.action !== 'exec') throw new Error('exec did not parse');
  const request = execRequestOf(parsed.envelope.args);
  t.strictSame(request, { command: 'ls', cwd: 'src', env: { A: '1' }, stdin: 'in' }, 'no timeout');
  // The row stores JSON; what comes back is the same request.
  t.strictSame(parseExecRequest(JSON.parse(JSON.stringify(request))), request);
  t.strictSame(parseExecRequest({ command: 'true' }), { command: 'true' });
});

t.test('a row that holds no exec request is refused, not cast', async (t) => {
  for (const bad of [
    {},
    null,
    'ls',
    { kind: 'no-sandbox' },
    { command: '' },
    { command: 'ls', env: { 'A=B': 'x' } },
    { command: 'ls', cwd: 7 },
    { command: 'ls', extra: true },
  ]) {
    t.equal(parseExecRequest(bad), null, JSON.stringify(bad));
  }
});

t.test('expected outputs ride in the request, their names filled in', async (t) => {
  const parsed = parseEnvelope({
    runId: 'run-1',
    agentId: 'a',
    taskId: 't',
    action: 'exec',
    args: {
      command: 'make',
      outputs: [
        { path: 'out/report.pdf' },
        { path: 'x', name: 'y.md', contentType: 'text/markdown' },
      ],
    },
  });
  if (!parsed.ok || parsed.envelope.action !== 'exec') throw new Error('exec did not parse');
  const request = execRequestOf(parsed.envelope.args);
  t.strictSame(request.outputs, [
    { path: 'out/report.pdf', name: 'report.pdf' },
    { path: 'x', name: 'y.md', contentType: 'text/markdown' },
  ]);
  t.strictSame(parseExecRequest(JSON.parse(JSON.stringify(request))), request);
  for (const outputs of [
    [],
    [{ path: '' }],
    [{ path: 'a' }, { path: 'a' }],
    [{ path: 'a', name: '..' }],
    [{ path: 'a', extra: 1 }],
    Array.from({ length: 33 }, (_, i) => ({ path: `f${i}` })),
  ]) {
    const bad = parseEnvelope({
      runId: 'run-1',
      agentId: 'a',
      taskId: 't',
      action: 'exec',
      args: { command: 'make', outputs },
    });
    t.equal(bad.ok, false, JSON.stringify(outputs).slice(0, 60));
  }
});

t.test('an environment value with a NUL is refused where the call is parsed', async (t) => {
  for (const action of ['exec', 'process_start']) {
    const refused = parseEnvelope({
      runId: 'run-1',
      agentId: 'a',
      taskId: 't',
      action,
      args: { command: 'ls', env: { OK: 'fine', BAD: 'a\0b' } },
    });
    t.equal(refused.ok ? null : refused.errorCode, 'invalid_arguments', action);
    t.match(refused.ok ? '' : refused.message, /args\.env\.BAD: the value contains a NUL byte/);
  }
  // A row that holds one is no exec request either.
  t.equal(parseExecRequest({ command: 'ls', env: { A: 'x\0y' } }), null);
});
