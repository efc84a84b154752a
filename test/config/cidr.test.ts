import t from 'tap';
import { parseCidr } from '../../src/config/index.js';

t.test('CIDR ranges, IPv4 and IPv6', async (t) => {
  t.strictSame(parseCidr('127.0.0.0/8'), {
    ok: true,
    value: { family: 4, address: '127.0.0.0', prefixLength: 8, text: '127.0.0.0/8' },
  });
  t.strictSame(parseCidr('fe80::/10'), {
    ok: true,
    value: { family: 6, address: 'fe80::', prefixLength: 10, text: 'fe80::/10' },
  });
  for (const text of ['0.0.0.0/0', '10.0.0.1/32', '::1/128', '::ffff:10.0.0.0/104']) {
    t.equal(parseCidr(text).ok, true, text);
  }
  const bad: Array<[string, RegExp]> = [
    ['10.0.0.1', /"\/prefix" is missing/],
    ['10.0.0.0/33', /0 to 32/],
    ['::/129', /0 to 128/],
    ['10.0.0.0/08x', /prefix length/],
    ['10.0.0/8', /not an IPv4 or IPv6/],
    ['[::1]/128', /not an IPv4 or IPv6/],
    ['/8', /not an IPv4 or IPv6/],
  ];
  for (const [text, reason] of bad) {
    const parsed = parseCidr(text);
    t.equal(parsed.ok, false, text);
    if (!parsed.ok) t.match(parsed.expected, reason, text);
  }
});
