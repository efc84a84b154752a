import t from 'tap';
import { cidr, type EgressPolicy, NO_EGRESS } from '../../../src/contract/index.js';
import { checkName, checkTarget } from '../../../src/sandbox/egress/target-check.js';
import { rules } from './egress-fixture.js';

// The decision on one destination, as data: no sockets, a resolver map.

const policy: EgressPolicy = {
  allow: rules('pkgs.test:443', '*.npm.test', 'any.test'),
  secrets: [],
};

t.test('the name half: names only, then the policy', async (t) => {
  const rows: [string, number, string | null][] = [
    ['pkgs.test', 443, null],
    ['PKGS.Test.', 443, null],
    ['registry.npm.test', 8443, null],
    ['a.b.npm.test', 1, null],
    ['npm.test', 443, 'not_allowed'],
    ['any.test', 22, null],
    ['pkgs.test', 80, 'port_not_allowed'],
    ['evil.test', 443, 'not_allowed'],
    ['127.0.0.1', 443, 'ip_literal'],
    ['[::1]', 443, 'ip_literal'],
    ['::1', 443, 'ip_literal'],
    ['0x7f000001', 443, 'ip_literal'],
    ['017700000001', 443, 'ip_literal'],
    ['127.1', 443, 'ip_literal'],
    ['1.2.3.4.5', 443, 'not_a_name'],
    ['under_score.test', 443, 'not_a_name'],
    ['xn--nxasmq6b.test', 443, 'not_allowed'],
    ['bücher.test', 443, 'not_a_name'],
    ['', 443, 'not_a_name'],
    [`${'a'.repeat(64)}.test`, 443, 'not_a_name'],
    ['pkgs.test\r\nX-Evil: 1', 443, 'not_a_name'],
  ];
  for (const [host, port, reason] of rows) {
    const got = checkName(policy, host, port);
    t.equal(got.ok ? null : got.refusal.reason, reason, `${JSON.stringify(host)}:${port}`);
    if (!got.ok) t.notMatch(got.refusal.host, /[\r\n ]/, 'the host is printable in messages');
  }
  t.equal(checkName(NO_EGRESS, 'pkgs.test', 443).ok, false, 'no rules: no network');
});

t.test('resolved once, every address checked', async (t) => {
  const answers: Record<string, string[]> = {
    'pkgs.test': ['127.0.0.1', '::1'],
    'any.test': ['93.184.215.14', '10.1.2.3'],
  };
  let calls = 0;
  const resolve = async (h: string) => {
    calls += 1;
    const a = answers[h];
    if (a === undefined) throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' });
    return a;
  };
  const loopback = [cidr('127.0.0.0/8'), cidr('::1/128')];
  const ok = await checkTarget(policy, 'pkgs.test', 443, resolve, loopback);
  t.same(ok.allowed && ok.target.addresses, [
    { address: '127.0.0.1', family: 4 },
    { address: '::1', family: 6 },
  ]);
  t.equal(calls, 1);
  const partly = await checkTarget(policy, 'pkgs.test', 443, resolve, [cidr('127.0.0.0/8')]);
  t.match(
    partly,
    { allowed: false, refusal: { reason: 'address_blocked', address: '::1' } },
    'one blocked address refuses the name',
  );
  const mixed = await checkTarget(policy, 'any.test', 443, resolve, []);
  t.match(mixed, {
    allowed: false,
    refusal: { reason: 'address_blocked', detail: 'any.test resolves to 10.1.2.3 (private)' },
  });
  const missing = await checkTarget(policy, 'x.npm.test', 443, resolve, []);
  t.match(missing, {
    allowed: false,
    refusal: { reason: 'dns_failed', detail: 'x.npm.test could not be resolved (ENOTFOUND)' },
  });
  calls = 0;
  await checkTarget(policy, 'evil.test', 443, resolve, []);
  t.equal(calls, 0, 'a name the policy refuses is not resolved');
});
