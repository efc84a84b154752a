/**
 * CIDR ranges: the one range type, parsed once. The operator's allow list
 * (`MEMQL_FETCH_ALLOW_PRIVATE`) is parsed with {@link parseCidr} when the
 * configuration is loaded, so a bad entry stops the node at boot naming the
 * variable; the fetch policy takes the parsed ranges as given. The built-in
 * address tables use {@link cidr}. Pure.
 *
 * @module
 */

import { formatAddress, type IpAddress, parseIPv4Strict, parseIPv6 } from './ip-address.js';

/** One address range with its host bits cleared. */
export interface CidrRange {
  /** IP version of the range. */
  readonly family: 4 | 6;
  /** The network address, host bits cleared; length 4 or 16. */
  readonly bytes: Uint8Array;
  /** Prefix length in bits: 0..32 for IPv4, 0..128 for IPv6. */
  readonly prefixLength: number;
  /** The range in canonical form (`127.0.0.0/8`), for logs, messages and payloads. */
  readonly text: string;
}

/**
 * The outcome of {@link parseCidr}: the range, or what is wrong with the text.
 * A result rather than a throw: a bad setting is ordinary data to the config
 * loader, which gathers every problem into one error.
 */
export type ParsedCidr =
  | { readonly ok: true; readonly range: CidrRange }
  | {
      readonly ok: false;
      /** What is wrong, e.g. `the "/prefix" is missing (...)`; follows a description of the shape. */
      readonly problem: string;
    };

/**
 * Parses `address/prefix`, IPv4 or IPv6. Strict: the address is plain dotted
 * decimal (no `010.0.0.1` or `10.1` forms, which `inet_aton` would read as octal
 * or short) or IPv6 text without brackets or a zone; the prefix is decimal
 * without leading zeros; nothing around them, not even spaces. The prefix is
 * required, so `10.0.0.0` is never silently read as `/32` or `/8`; host bits are
 * cleared (`10.1.2.3/8` is `10.0.0.0/8`).
 */
export function parseCidr(text: string): ParsedCidr {
  const slash = text.indexOf('/');
  if (slash < 0) return problem('the "/prefix" is missing (write 10.0.0.1/32 for one address)');
  const addressText = text.slice(0, slash);
  const prefixText = text.slice(slash + 1);
  const bytes =
    parseIPv4Strict(addressText) ?? (addressText.includes(':') ? parseIPv6(addressText) : null);
  if (bytes === null) {
    return problem(`${JSON.stringify(addressText)} is not an IPv4 or IPv6 address`);
  }
  const family = bytes.length === 4 ? 4 : 6;
  const max = bytes.length * 8;
  const prefixLength = /^(0|[1-9][0-9]{0,2})$/.test(prefixText) ? Number(prefixText) : Number.NaN;
  if (!(prefixLength <= max)) {
    return problem(`the prefix length must be 0 to ${max}, not ${JSON.stringify(prefixText)}`);
  }
  const masked = maskBytes(bytes, prefixLength);
  return {
    ok: true,
    range: {
      family,
      bytes: masked,
      prefixLength,
      text: `${formatAddress({ family, bytes: masked })}/${prefixLength}`,
    },
  };
}

/** Parses a range known to be valid (a built-in table, a test); throws on a typo there. */
export function cidr(text: string): CidrRange {
  const parsed = parseCidr(text);
  if (!parsed.ok) {
    throw new Error(`built-in CIDR ${JSON.stringify(text)} is malformed: ${parsed.problem}`);
  }
  return parsed.range;
}

/**
 * Whether `address` lies in `range`. Families must match: an IPv4 range does
 * not contain an IPv6 address (callers that treat IPv4-mapped IPv6 as IPv4 say so).
 */
export function cidrContains(range: CidrRange, address: IpAddress): boolean {
  if (range.family !== address.family) return false;
  const masked = maskBytes(address.bytes, range.prefixLength);
  return masked.every((b, i) => b === range.bytes[i]);
}

function problem(text: string): ParsedCidr {
  return { ok: false, problem: text };
}

function maskBytes(bytes: Uint8Array, prefixLength: number): Uint8Array {
  const out = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) {
    const bits = Math.max(0, Math.min(8, prefixLength - 8 * i));
    out[i] = bytes[i]! & ((0xff << (8 - bits)) & 0xff);
  }
  return out;
}
