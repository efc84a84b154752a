/**
 * What kind of address an IP address is: public, loopback, private, cloud
 * metadata, ... One table, read by two decisions: whether `fetch` may connect
 * to an address (the fetch policy in the workbench, which passes only `public`
 * ones unless the operator's allow list covers them, and never cloud metadata)
 * and whether a mesh listen address is loopback (`meshExposure` in config). Pure.
 *
 * IPv6 forms that carry an IPv4 address (IPv4-mapped, IPv4-translated, NAT64,
 * IPv4-compatible, 6to4, Teredo) are classified by the IPv4 address they carry,
 * so `::ffff:127.0.0.1` is loopback, not "some IPv6 address"; `via` says which
 * form it was, for decisions that care how the address is reached.
 *
 * @module
 */

import { type CidrRange, cidr, cidrContains } from './cidr-range.js';
import { formatAddress, type IpAddress, parseIpAddress } from './ip-address.js';

/** The range an address falls in. Only `public` addresses are reachable by default. */
export type AddressCategory =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'cgnat'
  | 'multicast'
  | 'unspecified'
  | 'broadcast'
  | 'reserved'
  | 'benchmarking'
  | 'documentation'
  | 'cloud-metadata'
  | 'invalid';

/** How an IPv6 address carries an IPv4 address. */
export type EmbeddingForm =
  | 'ipv4-mapped'
  | 'ipv4-translated'
  | 'nat64'
  | 'ipv4-compatible'
  | '6to4'
  | 'teredo';

/** The classification of one address. */
export interface AddressClass {
  /** True unless the category is `public`. */
  readonly blocked: boolean;
  /** The range the address (or the IPv4 address it carries) falls in. */
  readonly category: AddressCategory;
  /** The carried IPv4 address, for IPv6 forms that embed one. */
  readonly embeddedIPv4?: string;
  /** How the IPv4 address is carried, beside {@link embeddedIPv4}. */
  readonly via?: EmbeddingForm;
}

type RangeTable = readonly (readonly [CidrRange, AddressCategory])[];

function table(entries: readonly (readonly [string, AddressCategory])[]): RangeTable {
  return entries.map(([text, category]) => [cidr(text), category] as const);
}

// First match wins, so single addresses come before the ranges that hold them.
const IPV4_RANGES = table([
  ['255.255.255.255/32', 'broadcast'],
  ['169.254.169.254/32', 'cloud-metadata'], // AWS, GCP, Azure, OCI, DigitalOcean, ...
  ['169.254.170.2/32', 'cloud-metadata'], // AWS ECS task metadata
  ['100.100.100.200/32', 'cloud-metadata'], // Alibaba Cloud
  ['168.63.129.16/32', 'cloud-metadata'], // Azure wire server (a public-looking address)
  ['192.0.0.192/32', 'cloud-metadata'], // Oracle Cloud (legacy)
  ['0.0.0.0/8', 'unspecified'], // "this network"; 0.0.0.0 connects to the local host
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'cgnat'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'], // IETF protocol assignments
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', 'reserved'], // 6to4 relay anycast, deprecated
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
]);

const IPV6_RANGES = table([
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['fd00:ec2::254/128', 'cloud-metadata'], // AWS IMDS over IPv6
  ['64:ff9b:1::/48', 'private'], // local-use NAT64 (RFC 8215)
  ['100::/64', 'reserved'], // discard-only
  ['2001:db8::/32', 'documentation'],
  ['3fff::/20', 'documentation'],
  ['fc00::/7', 'private'], // unique local
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'private'], // site-local, deprecated
  ['ff00::/8', 'multicast'],
]);

/** Global unicast: every public IPv6 address is in here; the rest is reserved. */
const IPV6_GLOBAL = cidr('2000::/3');

interface Embedding {
  readonly range: CidrRange;
  readonly form: EmbeddingForm;
  /** Extracts the carried IPv4 bytes from the 16 IPv6 bytes. */
  readonly extract: (bytes: Uint8Array) => Uint8Array;
}

const lastFour = (bytes: Uint8Array) => bytes.slice(12, 16);

const EMBEDDINGS: readonly Embedding[] = [
  { range: cidr('::ffff:0:0/96'), form: 'ipv4-mapped', extract: lastFour },
  { range: cidr('::ffff:0:0:0/96'), form: 'ipv4-translated', extract: lastFour },
  { range: cidr('64:ff9b::/96'), form: 'nat64', extract: lastFour },
  { range: cidr('::/96'), form: 'ipv4-compatible', extract: lastFour },
  { range: cidr('2002::/16'), form: '6to4', extract: (b) => b.slice(2, 6) },
  // Teredo carries the client's IPv4 address with every bit inverted.
  {
    range: cidr('2001::/32'),
    form: 'teredo',
    extract: (b) => b.slice(12, 16).map((x) => x ^ 0xff),
  },
];

/**
 * Classifies an address. A string is parsed with every notation
 * `parseHostAddress` accepts (`2130706433`, `0x7f.1`, `[::ffff:7f00:1]`); text
 * that is not an address is `invalid` and blocked, so a caller that passes a
 * name by mistake fails closed.
 */
export function classifyAddress(ip: string | IpAddress): AddressClass {
  const address = typeof ip === 'string' ? parseIpAddress(ip) : ip;
  if (address === null) return { blocked: true, category: 'invalid' };
  return address.family === 4 ? classifyIPv4(address) : classifyIPv6(address);
}

function classifyIPv4(address: IpAddress): AddressClass {
  const found = IPV4_RANGES.find(([range]) => cidrContains(range, address));
  return found === undefined
    ? { blocked: false, category: 'public' }
    : { blocked: true, category: found[1] };
}

function classifyIPv6(address: IpAddress): AddressClass {
  const plain = { family: 6 as const, bytes: address.bytes };
  // :: and ::1 sit inside the IPv4-compatible range but mean themselves.
  const [unspecified, loopback] = IPV6_RANGES;
  for (const entry of [unspecified!, loopback!]) {
    if (cidrContains(entry[0], plain)) return { blocked: true, category: entry[1] };
  }
  for (const embedding of EMBEDDINGS) {
    if (!cidrContains(embedding.range, plain)) continue;
    const v4 = { family: 4 as const, bytes: embedding.extract(address.bytes) };
    const inner = classifyIPv4(v4);
    return { ...inner, embeddedIPv4: formatAddress(v4), via: embedding.form };
  }
  const found = IPV6_RANGES.find(([range]) => cidrContains(range, plain));
  if (found !== undefined) return { blocked: true, category: found[1] };
  if (!cidrContains(IPV6_GLOBAL, plain)) return { blocked: true, category: 'reserved' };
  return { blocked: false, category: 'public' };
}
