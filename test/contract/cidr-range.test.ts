import t from 'tap';
import { cidr, cidrContains, parseCidr, parseIpAddress } from '../../src/contract/index.js';

t.test('a range keeps its family, masked bytes, prefix and canonical text', async (t) => {
  t.strictSame(parseCidr('127.0.0.0/8'), {
    ok: true,
    range: { family: 4, bytes: Uint8Array.of(127, 0, 0, 0), prefixLength: 8, text: '127.0.0.0/8' },
  });
  t.strictSame(parseCidr('fe80::/10'), {
    ok: true,
    range: {
      family: 6,
      bytes: Uint8Array.of(0xfe, 0x80, ...new Array<number>(14).fill(0)),
      prefixLength: 10,
      text: 'fe80::/10',
    },
  });
});

t.test('canonical text: host bits cleared, IPv6 printed as RFC 5952', async (t) => {
  const cases: [string, string][] = [
    ['127.0.0.0/8', '127.0.0.0/8'],
    ['10.1.2.3/8', '10.0.0.0/8'],
    ['10.1.2.3/32', '10.1.2.3/32'],
    ['172.31.255.255/12', '172.16.0.0/12'],
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['203.0.113.9/0', '0.0.0.0/0'],
    ['10.0.0.1/32', '10.0.0.1/32'],
    ['::1/128', '::1/128'],
    ['::/0', '::/0'],
    ['fd00::ec2:0:0:1/16', 'fd00::/16'],
    ['FD00:0:0:0:0:0:0:1/8', 'fd00::/8'],
    ['2001:0db8:0000::/32', '2001:db8::/32'],
    ['::ffff:10.0.0.0/104', '::ffff:10.0.0.0/104'],
    ['::ffff:10.1.2.3/104', '::ffff:10.0.0.0/104'],
  ];
  for (const [text, canonical] of cases) {
    const parsed = parseCidr(text);
    t.equal(parsed.ok && parsed.range.text, canonical, text);
  }
});

t.test('what is wrong with a range that does not parse', async (t) => {
  const bad: [string, RegExp][] = [
    // the prefix is required, whichever way a bare address could be read
    ['10.0.0.1', /^the "\/prefix" is missing \(write 10\.0\.0\.1\/32 for one address\)$/],
    ['::1', /"\/prefix" is missing/],
    ['', /"\/prefix" is missing/],
    // strict dotted decimal: no inet_aton spellings, no leading zeros
    ['010.0.0.1/8', /^"010\.0\.0\.1" is not an IPv4 or IPv6 address$/],
    ['10.0.0.01/32', /"10\.0\.0\.01" is not an IPv4 or IPv6 address/],
    ['0x7f.1/8', /not an IPv4 or IPv6 address/],
    ['0177.0.0.1/8', /not an IPv4 or IPv6 address/],
    ['127.1/8', /not an IPv4 or IPv6 address/],
    ['10.0.0/8', /not an IPv4 or IPv6 address/],
    ['2130706433/32', /not an IPv4 or IPv6 address/],
    ['300.0.0.0/8', /not an IPv4 or IPv6 address/],
    ['10.0.0.0./8', /not an IPv4 or IPv6 address/],
    // IPv6 without brackets or a zone, and IPv4 tails as strict as IPv4
    ['[::1]/128', /not an IPv4 or IPv6 address/],
    ['fe80::1%eth0/64', /not an IPv4 or IPv6 address/],
    ['::ffff:127.0.0.01/104', /not an IPv4 or IPv6 address/],
    ['1::2::3/64', /not an IPv4 or IPv6 address/],
    ['12345::/16', /not an IPv4 or IPv6 address/],
    // names and nothing at all
    ['localhost/8', /^"localhost" is not an IPv4 or IPv6 address$/],
    ['host/8', /not an IPv4 or IPv6 address/],
    ['/8', /^"" is not an IPv4 or IPv6 address$/],
    // nothing around the range: the config reader trims list entries itself
    [' 127.0.0.1/32', /not an IPv4 or IPv6 address/],
    ['127.0.0.1/32 ', /prefix length/],
    // the prefix: decimal, no sign, no leading zero, within the family's width
    ['10.0.0.0/33', /^the prefix length must be 0 to 32, not "33"$/],
    ['127.0.0.0/33', /0 to 32/],
    ['::/129', /^the prefix length must be 0 to 128, not "129"$/],
    ['fd00::/129', /0 to 128/],
    ['10.0.0.0/08', /prefix length must be 0 to 32, not "08"/],
    ['10.0.0.0/08x', /prefix length/],
    ['10.0.0.0/', /prefix length must be 0 to 32, not ""/],
    ['10.0.0.0/-1', /prefix length/],
    ['10.0.0.0/+8', /prefix length/],
    ['10.0.0.0/8/8', /prefix length/],
    ['10.0.0.0/1000', /prefix length/],
  ];
  for (const [text, problem] of bad) {
    const parsed = parseCidr(text);
    t.equal(parsed.ok, false, text);
    if (!parsed.ok) t.match(parsed.problem, problem, text);
  }
});

t.test('cidr() is the parser for ranges known to be valid, and throws on a typo', async (t) => {
  t.strictSame(cidr('10.1.2.3/8'), cidr('10.0.0.0/8'));
  t.strictSame(parseCidr('10.1.2.3/8'), { ok: true, range: cidr('10.0.0.0/8') });
  t.throws(() => cidr('10.0.0.0/33'), /built-in CIDR "10\.0\.0\.0\/33" is malformed/);
});

t.test('containment', async (t) => {
  const cases: [string, string, boolean][] = [
    ['127.0.0.0/8', '127.255.0.1', true],
    ['127.0.0.0/8', '128.0.0.1', false],
    ['127.0.0.1/32', '127.0.0.1', true],
    ['127.0.0.1/32', '127.0.0.2', false],
    ['172.16.0.0/12', '172.31.255.255', true],
    ['172.16.0.0/12', '172.32.0.0', false],
    ['0.0.0.0/0', '203.0.113.9', true],
    ['fc00::/7', 'fdff::1', true],
    ['fc00::/7', 'fe00::1', false],
    ['2001:db8::/32', '2001:db8:ffff::1', true],
    ['::1/128', '::1', true],
    ['::/0', '2606:4700::1111', true],
    ['127.0.0.0/8', '::ffff:127.0.0.1', false],
    ['::/0', '127.0.0.1', false],
  ];
  for (const [text, address, expected] of cases) {
    const parsed = parseIpAddress(address);
    if (parsed === null) throw new Error(`test address ${address} does not parse`);
    t.equal(cidrContains(cidr(text), parsed), expected, `${text} contains ${address}`);
  }
});
