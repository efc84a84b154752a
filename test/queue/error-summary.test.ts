import t from 'tap';
import { requestStrings, summarizeError } from '../../src/queue/index.js';

t.test('error messages lose every string of the request', async (t) => {
  const request = {
    command: 'curl -H "x: SECRETTOKEN123" example; echo done',
    env: { API_KEY: 'k3y-value-long' },
    stdin: 'line one\nsecond-line-here',
  };
  const secrets = requestStrings(request);
  const err = new Error(
    'spawn failed for curl -H "x: SECRETTOKEN123" example; echo done with k3y-value-long and second-line-here',
  );
  const s = summarizeError(err, secrets);
  t.equal(s.errorName, 'Error');
  t.notMatch(s.errorMessage, 'SECRETTOKEN123');
  t.notMatch(s.errorMessage, 'k3y-value-long');
  t.notMatch(s.errorMessage, 'second-line-here');
  t.match(s.errorMessage, /^spawn failed for \[redacted\]/);
  t.notMatch(
    summarizeError(new Error('only SECRETTOKEN123 quoted'), secrets).errorMessage,
    'SECRET',
  );
});

t.test('codes are kept, messages capped', async (t) => {
  const s = summarizeError(Object.assign(new Error('x'.repeat(1000)), { code: 'unavailable' }));
  t.equal(s.errorName, 'Error:unavailable');
  t.ok(s.errorMessage.length <= 301);
  t.equal(summarizeError('plain').errorName, 'string');
});
