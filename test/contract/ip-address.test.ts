import t from 'tap';
import {
  formatAddress,
  parseHostAddress,
  parseIPv4Strict,
  parseIPv6,
} from '../../src/contract/index.js';

/** What a host parses to, printed: the address, `name:<host>` or `invalid`. */
function parsed(host: string): string {
  const result = parseHostAddress(host);
  if (result.kind === 'name') return `name:${result.name}`;
  if (result.kind === 'invalid') return 'invalid';
  const zone = result.address.zone === undefined ? '' : `%${result.address.zone}`;
  return `${formatAddress(result.address)}${zone}`;
}

t.test('every IPv4 notation inet_aton accepts', async (t) => {
  const cases: [string, string][] = [
    ['127.0.0.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['0177.0000.0000.0001', '127.0.0.1'],
    ['017700000001', '127.0.0.1'],
    ['0x7f.0.0.1', '127.0.0.1'],
    ['0X7F.0x0.0x0.0x1', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['0x7F000001', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['127.0.1', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['0177.1', '127.0.0.1'],
    ['127.0.0.1.', '127.0.0.1'],
    ['0', '0.0.0.0'],
    ['0x', '0.0.0.0'],
    ['0.0', '0.0.0.0'],
    ['167772165', '10.0.0.5'],
    ['0xa.0.0.5', '10.0.0.5'],
    ['10.0.0.0x5', '10.0.0.5'],
    ['012.0.0.05', '10.0.0.5'],
    ['10.5', '10.0.0.5'],
    ['2852039166', '169.254.169.254'],
    ['0xa9fea9fe', '169.254.169.254'],
    ['0251.0376.0251.0376', '169.254.169.254'],
    ['0xA9.0xFE.0xA9.0xFE', '169.254.169.254'],
    ['169.254.43518', '169.254.169.254'],
    ['169.16689662', '169.254.169.254'],
    ['4294967295', '255.255.255.255'],
    ['8.8.8.8', '8.8.8.8'],
  ];
  for (const [host, expected] of cases) t.equal(parsed(host), expected, host);
});

t.test('IPv4 look-alikes that are not addresses are invalid, not names', async (t) => {
  for (const host of [
    '256.0.0.1',
    '127.0.0.256',
    '1.2.3.4.5',
    '0x100.0.0.1',
    '09.0.0.1',
    '0178.0.0.1',
    '4294967296',
    '0x100000000',
    '127.16777216',
    '1..1',
    '.1',
    'foo.1',
    'foo.0x1',
  ]) {
    t.equal(parsed(host), 'invalid', host);
  }
});

t.test('names stay names (the resolver and the policy deal with them)', async (t) => {
  for (const host of [
    'example.com',
    'localhost',
    '127.0.0.1.nip.io',
    'foo.0x1g',
    '1e3',
    'a-1.b-2.',
  ]) {
    t.equal(parsed(host), `name:${host}`, host);
  }
  t.equal(parsed(''), 'invalid', 'empty');
});

t.test('IPv6, bracketed or bare, with zones and IPv4 tails', async (t) => {
  const cases: [string, string][] = [
    ['[::1]', '::1'],
    ['::1', '::1'],
    ['[0:0:0:0:0:0:0:1]', '::1'],
    ['[::]', '::'],
    ['[::ffff:127.0.0.1]', '::ffff:127.0.0.1'],
    ['[::ffff:7f00:1]', '::ffff:127.0.0.1'],
    ['[0:0:0:0:0:ffff:7f00:0001]', '::ffff:127.0.0.1'],
    ['[64:ff9b::127.0.0.1]', '64:ff9b::7f00:1'],
    ['[fe80::1%25eth0]', 'fe80::1%eth0'],
    ['fe80::1%eth0', 'fe80::1%eth0'],
    ['[FD00:EC2::254]', 'fd00:ec2::254'],
    ['[2001:db8:0:0:1:0:0:1]', '2001:db8::1:0:0:1'],
    ['[1:2:3:4:5:6:7::]', '1:2:3:4:5:6:7:0'],
    ['[1:0:0:2:0:0:0:3]', '1:0:0:2::3'],
  ];
  for (const [host, expected] of cases) t.equal(parsed(host), expected, host);
  for (const host of [
    '[::1',
    '::1]',
    '[1:2:3:4:5:6:7:8:9]',
    '[1:2:3:4:5:6:7]',
    '[:::1]',
    '[1::2::3]',
    '[12345::]',
    '[::ffff:127.0.0.01]',
    '[::127.0.0.1:1]',
    '[::1%]',
    '[::g]',
    '[:1::2]',
    '[1:]',
  ]) {
    t.equal(parsed(host), 'invalid', host);
  }
});

t.test('the strict forms settings take: plain dotted decimal, plain IPv6', async (t) => {
  const v4: [string, string | null][] = [
    ['10.0.0.1', '10.0.0.1'],
    ['0.0.0.0', '0.0.0.0'],
    ['255.255.255.255', '255.255.255.255'],
    ['010.0.0.1', null],
    ['10.0.0.01', null],
    ['0x7f.0.0.1', null],
    ['127.1', null],
    ['2130706433', null],
    ['256.0.0.1', null],
    ['1.2.3.4.', null],
    [' 1.2.3.4', null],
    ['', null],
  ];
  for (const [text, expected] of v4) {
    const bytes = parseIPv4Strict(text);
    t.equal(bytes && formatAddress({ family: 4, bytes }), expected, JSON.stringify(text));
  }
  const v6: [string, string | null][] = [
    ['::1', '::1'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['FD00::1', 'fd00::1'],
    ['::ffff:127.0.0.1', '::ffff:127.0.0.1'],
    ['[::1]', null],
    ['fe80::1%eth0', null],
    ['::ffff:127.0.0.01', null],
    ['1::2::3', null],
    ['12345::', null],
    ['', null],
  ];
  for (const [text, expected] of v6) {
    const bytes = parseIPv6(text);
    t.equal(bytes && formatAddress({ family: 6, bytes }), expected, JSON.stringify(text));
  }
});
