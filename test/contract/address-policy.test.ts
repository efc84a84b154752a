import t from 'tap';
import {
  type CidrRange,
  cidr,
  evaluateAddress,
  type IpAddress,
  parseIpAddress,
} from '../../src/contract/index.js';

// The connect decision fetch and the egress proxy share, on top of the contract's
// classification: nothing here resolves or connects.

function ip(text: string): IpAddress {
  const address = parseIpAddress(text);
  if (address === null) throw new Error(`test address ${text} does not parse`);
  return address;
}

function ranges(...texts: string[]): CidrRange[] {
  return texts.map(cidr);
}

t.test('the allow list exempts the ranges it names, and only those', async (t) => {
  const loopback = ranges('127.0.0.0/8');
  const cases: [string, CidrRange[], boolean, string?][] = [
    ['127.0.0.1', loopback, true, '127.0.0.0/8'],
    ['127.0.0.2', loopback, true, '127.0.0.0/8'],
    ['::ffff:127.0.0.1', loopback, true, '127.0.0.0/8'],
    ['127.0.0.1', [], false],
    ['127.0.0.2', ranges('127.0.0.1/32'), false],
    ['127.0.0.1', ranges('127.0.0.1/32'), true, '127.0.0.1/32'],
    ['::1', loopback, false],
    ['::1', ranges('::1/128'), true, '::1/128'],
    ['10.0.0.5', loopback, false],
    ['10.0.0.5', ranges('10.0.0.0/8'), true, '10.0.0.0/8'],
    ['fd12::1', ranges('fd00::/8'), true, 'fd00::/8'],
    // Forms that only travel through a translator are not the IPv4 range's address.
    ['64:ff9b::7f00:1', loopback, false],
    ['2002:7f00:1::1', loopback, false],
    // Cloud metadata is never exempt, however wide the allow list.
    ['169.254.169.254', ranges('169.254.0.0/16'), false],
    ['169.254.169.254', ranges('0.0.0.0/0'), false],
    ['::ffff:169.254.169.254', ranges('0.0.0.0/0', '::/0'), false],
    ['fd00:ec2::254', ranges('::/0'), false],
    ['100.100.100.200', ranges('100.64.0.0/10'), false],
    // Public addresses need no allow list.
    ['8.8.8.8', [], true],
    ['2606:4700::1111', [], true],
  ];
  for (const [address, allow, allowed, allowedBy] of cases) {
    const verdict = evaluateAddress(ip(address), allow);
    const label = `${address} with [${allow.map((r) => r.text).join(', ')}]`;
    t.equal(verdict.allowed, allowed, label);
    t.equal(verdict.allowedBy, allowedBy, `${label}: allowedBy`);
  }
  t.equal(evaluateAddress(ip('0x7f.1'), []).address, '127.0.0.1', 'printed canonically');
});
