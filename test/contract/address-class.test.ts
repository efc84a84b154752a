import t from 'tap';
import { type AddressCategory, classifyAddress } from '../../src/contract/index.js';

// Classification only: nothing here resolves or connects. What fetch does with a
// category is test/contract/address-policy.test.ts; the mesh's loopback
// check is test/config/mesh-exposure.test.ts.

const PUBLIC: string[] = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.215.14',
  '11.0.0.1',
  '172.15.255.255',
  '172.32.0.0',
  '100.63.255.255',
  '100.128.0.0',
  '169.253.255.255',
  '169.255.0.1',
  '192.167.255.255',
  '192.169.0.1',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '2606:4700::1111',
  '2001:4860:4860::8888',
  '2a00:1450:4001:80b::200e',
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1',
];

const BLOCKED: [string, AddressCategory][] = [
  // loopback, in every notation
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['2130706433', 'loopback'],
  ['0177.0.0.1', 'loopback'],
  ['0x7f.0.0.1', 'loopback'],
  ['0x7f000001', 'loopback'],
  ['017700000001', 'loopback'],
  ['127.1', 'loopback'],
  ['127.0.1', 'loopback'],
  ['0x7f.1', 'loopback'],
  ['::1', 'loopback'],
  ['[::1]', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  // private
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['167772165', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.0.1', 'private'],
  ['192.168.255.255', 'private'],
  ['fc00::1', 'private'],
  ['fd12:3456:789a::1', 'private'],
  ['fec0::1', 'private'],
  ['64:ff9b:1::a00:1', 'private'],
  // link-local
  ['169.254.0.1', 'link-local'],
  ['169.254.255.255', 'link-local'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['[fe80::1%25eth0]', 'link-local'],
  ['febf:ffff::1', 'link-local'],
  // cloud metadata
  ['169.254.169.254', 'cloud-metadata'],
  ['0xa9fea9fe', 'cloud-metadata'],
  ['2852039166', 'cloud-metadata'],
  ['0251.0376.0251.0376', 'cloud-metadata'],
  ['169.254.43518', 'cloud-metadata'],
  ['169.254.170.2', 'cloud-metadata'],
  ['100.100.100.200', 'cloud-metadata'],
  ['168.63.129.16', 'cloud-metadata'],
  ['fd00:ec2::254', 'cloud-metadata'],
  // CGNAT
  ['100.64.0.1', 'cgnat'],
  ['100.127.255.255', 'cgnat'],
  // multicast
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['ff02::1', 'multicast'],
  ['ff05::1:3', 'multicast'],
  // unspecified, broadcast, reserved
  ['0.0.0.0', 'unspecified'],
  ['0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['::', 'unspecified'],
  ['255.255.255.255', 'broadcast'],
  ['4294967295', 'broadcast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.254', 'reserved'],
  ['192.0.0.8', 'reserved'],
  ['100::1', 'reserved'],
  ['4000::1', 'reserved'],
  ['::1:0:0:1', 'reserved'],
  // benchmarking, documentation
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['192.0.2.1', 'documentation'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.9', 'documentation'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation'],
];

/** IPv6 forms that carry an IPv4 address: [address, category, carried IPv4, form]. */
const EMBEDDED: [string, AddressCategory, string, string][] = [
  ['::ffff:127.0.0.1', 'loopback', '127.0.0.1', 'ipv4-mapped'],
  ['::ffff:7f00:1', 'loopback', '127.0.0.1', 'ipv4-mapped'],
  ['[::ffff:7f00:1]', 'loopback', '127.0.0.1', 'ipv4-mapped'],
  ['0:0:0:0:0:ffff:7f00:1', 'loopback', '127.0.0.1', 'ipv4-mapped'],
  ['::ffff:169.254.169.254', 'cloud-metadata', '169.254.169.254', 'ipv4-mapped'],
  ['::ffff:a00:1', 'private', '10.0.0.1', 'ipv4-mapped'],
  ['::ffff:0.0.0.0', 'unspecified', '0.0.0.0', 'ipv4-mapped'],
  ['::ffff:0:127.0.0.1', 'loopback', '127.0.0.1', 'ipv4-translated'],
  ['::ffff:0:7f00:1', 'loopback', '127.0.0.1', 'ipv4-translated'],
  ['64:ff9b::127.0.0.1', 'loopback', '127.0.0.1', 'nat64'],
  ['64:ff9b::a9fe:a9fe', 'cloud-metadata', '169.254.169.254', 'nat64'],
  ['64:ff9b::c0a8:101', 'private', '192.168.1.1', 'nat64'],
  ['::127.0.0.1', 'loopback', '127.0.0.1', 'ipv4-compatible'],
  ['::7f00:1', 'loopback', '127.0.0.1', 'ipv4-compatible'],
  ['::10.0.0.1', 'private', '10.0.0.1', 'ipv4-compatible'],
  ['::2', 'unspecified', '0.0.0.2', 'ipv4-compatible'],
  ['2002:7f00:1::1', 'loopback', '127.0.0.1', '6to4'],
  ['2002:a9fe:a9fe::', 'cloud-metadata', '169.254.169.254', '6to4'],
  ['2002:c0a8:101:1::1', 'private', '192.168.1.1', '6to4'],
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback', '127.0.0.1', 'teredo'],
];

t.test('public addresses are allowed', async (t) => {
  for (const address of PUBLIC) {
    const verdict = classifyAddress(address);
    t.equal(verdict.blocked, false, address);
    t.equal(verdict.category, 'public', address);
  }
});

t.test('every blocked range, in every notation', async (t) => {
  for (const [address, category] of BLOCKED) {
    t.strictSame(classifyAddress(address), { blocked: true, category }, address);
  }
});

t.test('IPv6 forms are classified by the IPv4 address they carry', async (t) => {
  for (const [address, category, embeddedIPv4, via] of EMBEDDED) {
    t.strictSame(classifyAddress(address), { blocked: true, category, embeddedIPv4, via }, address);
  }
  t.strictSame(classifyAddress('::ffff:8.8.8.8'), {
    blocked: false,
    category: 'public',
    embeddedIPv4: '8.8.8.8',
    via: 'ipv4-mapped',
  });
});

t.test('text that is not an address fails closed', async (t) => {
  for (const text of ['', 'example.com', 'localhost', '1.2.3.256', '[::1', 'fe80::1%']) {
    t.strictSame(
      classifyAddress(text),
      { blocked: true, category: 'invalid' },
      JSON.stringify(text),
    );
  }
});

t.test('the table is large enough to mean something', async (t) => {
  t.ok(PUBLIC.length + BLOCKED.length + EMBEDDED.length >= 60);
});
