/**
 * IP addresses as text: parsing and printing, shared by the fetch policy, CIDR
 * ranges and the mesh exposure check. Pure.
 *
 * Two strictnesses. A URL host can spell one address many ways: `2130706433`,
 * `0177.0.0.1`, `0x7f.1` and `127.1` all reach 127.0.0.1 through `inet_aton`,
 * which resolvers and the WHATWG URL parser both follow. {@link parseHostAddress}
 * accepts every one of those spellings, so that no spelling slips past the fetch
 * policy as a "name". Settings (CIDR ranges, listen addresses) take only the
 * plain forms, {@link parseIPv4Strict} and {@link parseIPv6}, so an operator's
 * `010.0.0.1` is refused rather than read one way or the other.
 *
 * @module
 */

/** One IP address as bytes: 4 for IPv4, 16 for IPv6. */
export interface IpAddress {
  /** IP version. */
  readonly family: 4 | 6;
  /** Network-order bytes; length 4 or 16. */
  readonly bytes: Uint8Array;
  /** IPv6 zone (scope) id, such as `eth0`, when one was written; ignored by the policy. */
  readonly zone?: string;
}

/** What a URL host turned out to be. */
export type ParsedHost =
  | { readonly kind: 'ip'; readonly address: IpAddress }
  | { readonly kind: 'name'; readonly name: string }
  | { readonly kind: 'invalid'; readonly reason: string };

/**
 * Classifies a host as an IP address (any notation), a name to resolve, or
 * neither. Accepts URL hosts (`[::1]`, `127.1`) and bare addresses from a resolver.
 *
 * - Brackets, or any `:`, mean IPv6; a zone may follow `%` or the URL form `%25`.
 * - A host whose last dot-separated label is a number (decimal, `0`-prefixed octal,
 *   or `0x` hex) is IPv4 in `inet_aton` form: 1 to 4 parts, the last part filling
 *   the remaining bytes; one trailing dot is allowed. Such a host that does not
 *   parse is invalid rather than a name, as in the WHATWG URL standard, so a
 *   resolver never sees `0x7f.0.0.1x`-style look-alikes.
 * - Anything else non-empty is a name.
 */
export function parseHostAddress(host: string): ParsedHost {
  if (host === '') return invalid('the host is empty');
  if (host.startsWith('[') || host.endsWith(']')) {
    if (!(host.startsWith('[') && host.endsWith(']'))) return invalid('unbalanced brackets');
    return ipv6Host(host.slice(1, -1));
  }
  if (host.includes(':')) return ipv6Host(host);
  if (endsInNumber(host)) {
    const bytes = parseIPv4Loose(host);
    return bytes === null
      ? invalid(`${JSON.stringify(host)} looks like an IPv4 address but is not one`)
      : { kind: 'ip', address: { family: 4, bytes } };
  }
  return { kind: 'name', name: host };
}

/**
 * Parses an address (no brackets needed) in any notation {@link parseHostAddress}
 * accepts; null for names and invalid text.
 */
export function parseIpAddress(text: string): IpAddress | null {
  const parsed = parseHostAddress(text);
  return parsed.kind === 'ip' ? parsed.address : null;
}

/**
 * Parses IPv4 as `inet_aton` does: `a.b.c.d`, `a.b.c` (c is 16 bits), `a.b`
 * (b is 24 bits) or `a` (32 bits); each part decimal, octal (leading `0`) or hex
 * (`0x`). One trailing dot is ignored. Null when it is not such an address.
 */
export function parseIPv4Loose(text: string): Uint8Array | null {
  const body = text.endsWith('.') ? text.slice(0, -1) : text;
  const parts = body.split('.');
  if (parts.length > 4) return null;
  const numbers: bigint[] = [];
  for (const part of parts) {
    const n = parseIPv4Number(part);
    if (n === null) return null;
    numbers.push(n);
  }
  const last = numbers.pop()!;
  if (numbers.some((n) => n > 255n)) return null;
  if (last >= 256n ** BigInt(5 - parts.length)) return null;
  let value = last;
  numbers.forEach((n, i) => {
    value += n << BigInt(8 * (3 - i));
  });
  return uint32Bytes(Number(value));
}

/**
 * Parses strict dotted-decimal IPv4 (`192.168.0.1`: four decimal parts, no
 * leading zeros), the only form allowed inside IPv6 text and CIDR ranges.
 */
export function parseIPv4Strict(text: string): Uint8Array | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const bytes = new Uint8Array(4);
  for (const [i, part] of parts.entries()) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part) || Number(part) > 255) return null;
    bytes[i] = Number(part);
  }
  return bytes;
}

/**
 * Parses IPv6 text without brackets or zone: hex groups, at most one `::`, and an
 * optional dotted-decimal IPv4 tail (`::ffff:127.0.0.1`). Null when invalid.
 */
export function parseIPv6(text: string): Uint8Array | null {
  const gap = text.indexOf('::');
  if (gap !== text.lastIndexOf('::')) return null;
  const head = gap < 0 ? text : text.slice(0, gap);
  const tail = gap < 0 ? '' : text.slice(gap + 2);
  const headWords = ipv6Words(head, gap < 0);
  const tailWords = ipv6Words(tail, true);
  if (headWords === null || tailWords === null) return null;
  const count = headWords.length + tailWords.length;
  if (gap < 0 ? count !== 8 : count > 7) return null;
  const words = [...headWords, ...new Array<number>(8 - count).fill(0), ...tailWords];
  const bytes = new Uint8Array(16);
  words.forEach((w, i) => {
    bytes[2 * i] = w >> 8;
    bytes[2 * i + 1] = w & 0xff;
  });
  return bytes;
}

/**
 * Prints an address: dotted decimal for IPv4; RFC 5952 text for IPv6 (lowercase,
 * the longest run of zero groups as `::`), with IPv4-mapped addresses as
 * `::ffff:a.b.c.d`. The zone is not printed.
 */
export function formatAddress(address: IpAddress): string {
  const b = address.bytes;
  if (address.family === 4) return Array.from(b).join('.');
  if (b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff) {
    return `::ffff:${Array.from(b.subarray(12)).join('.')}`;
  }
  const words = Array.from({ length: 8 }, (_, i) => (b[2 * i]! << 8) | b[2 * i + 1]!);
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j === i ? i + 1 : j;
  }
  const hex = (ws: number[]) => ws.map((w) => w.toString(16)).join(':');
  if (bestStart < 0) return hex(words);
  return `${hex(words.slice(0, bestStart))}::${hex(words.slice(bestStart + bestLength))}`;
}

/** The four bytes of a 32-bit number, network order. */
export function uint32Bytes(value: number): Uint8Array {
  return new Uint8Array([
    (value >>> 24) & 0xff,
    (value >>> 16) & 0xff,
    (value >>> 8) & 0xff,
    value & 0xff,
  ]);
}

function invalid(reason: string): ParsedHost {
  return { kind: 'invalid', reason };
}

function ipv6Host(text: string): ParsedHost {
  const percent = text.indexOf('%');
  const core = percent < 0 ? text : text.slice(0, percent);
  let zone: string | undefined;
  if (percent >= 0) {
    // In a URL the zone separator is itself percent-encoded (RFC 6874): `%25eth0`.
    const raw = text.slice(percent + 1);
    zone = raw.startsWith('25') && raw.length > 2 ? raw.slice(2) : raw;
    if (!/^[A-Za-z0-9_.~-]+$/.test(zone)) return invalid('the IPv6 zone id is malformed');
  }
  const bytes = parseIPv6(core);
  if (bytes === null) return invalid(`${JSON.stringify(text)} is not an IPv6 address`);
  return {
    kind: 'ip',
    address: zone === undefined ? { family: 6, bytes } : { family: 6, bytes, zone },
  };
}

/** The 16-bit words of one side of `::`; a dotted IPv4 tail counts as two. */
function ipv6Words(side: string, mayEndInIPv4: boolean): number[] | null {
  if (side === '') return [];
  const groups = side.split(':');
  const words: number[] = [];
  for (const [i, group] of groups.entries()) {
    if (group.includes('.')) {
      if (!mayEndInIPv4 || i !== groups.length - 1) return null;
      const v4 = parseIPv4Strict(group);
      if (v4 === null) return null;
      words.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
    } else if (/^[0-9a-fA-F]{1,4}$/.test(group)) {
      words.push(Number.parseInt(group, 16));
    } else {
      return null;
    }
  }
  return words;
}

/** The WHATWG "ends in a number" test: the last label decides whether a host is IPv4. */
function endsInNumber(host: string): boolean {
  const labels = host.split('.');
  if (labels.at(-1) === '' && labels.length > 1) labels.pop();
  const last = labels.at(-1) ?? '';
  return /^[0-9]+$/.test(last) || /^0x[0-9a-f]*$/i.test(last);
}

function parseIPv4Number(part: string): bigint | null {
  if (/^0x[0-9a-f]*$/i.test(part)) return part.length === 2 ? 0n : BigInt(`0x${part.slice(2)}`);
  if (/^0[0-7]+$/.test(part)) return BigInt(`0o${part.slice(1)}`);
  if (/^(0|[1-9][0-9]*)$/.test(part)) return BigInt(part);
  return null;
}
