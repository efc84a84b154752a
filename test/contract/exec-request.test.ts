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
