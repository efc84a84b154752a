/**
 * CIDR ranges for the fetch policy: the built-in blocked ranges and the
 * operator's allow list (`MEMQL_FETCH_ALLOW_PRIVATE`). Pure.
 *
 * @module
 */

import { formatAddress, type IpAddress, parseIPv4Strict, parseIPv6 } from './address-parse.js';

/** One address range with its host bits cleared. */
export interface CidrRange {
  /** IP version of the range. */
  readonly family: 4 | 6;
  /** The network address, host bits cleared; length 4 or 16. */
  readonly bytes: Uint8Array;
  /** Prefix length in bits: 0..32 for IPv4, 0..128 for IPv6. */
  readonly prefixLength: number;
  /** The range in canonical form (`127.0.0.0/8`), for messages and payloads. */
  readonly text: string;
}

/**
 * Parses `address/prefix`, IPv4 (strict dotted decimal) or IPv6. The prefix is
 * required, so `10.0.0.0` is never silently read as `/32` or `/8`; host bits are
 * cleared (`10.1.2.3/8` is `10.0.0.0/8`). Null when the text is not a range.
 */
export function parseCidr(text: string): CidrRange | null {
  const trimmed = text.trim();
  const slash = trimmed.indexOf('/');
  if (slash < 0) return null;
  const addressText = trimmed.slice(0, slash);
  const prefixText = trimmed.slice(slash + 1);
  const v4 = parseIPv4Strict(addressText);
  const bytes = v4 ?? (addressText.includes(':') ? parseIPv6(addressText) : null);
  if (bytes === null) return null;
  const family = bytes.length === 4 ? 4 : 6;
  if (!/^(0|[1-9][0-9]{0,2})$/.test(prefixText)) return null;
  const prefixLength = Number(prefixText);
  if (prefixLength > bytes.length * 8) return null;
  const masked = maskBytes(bytes, prefixLength);
  return {
    family,
    bytes: masked,
    prefixLength,
    text: `${formatAddress({ family, bytes: masked })}/${prefixLength}`,
  };
}

/**
 * Whether `address` lies in `range`. Families must match: an IPv4 range does
 * not contain an IPv6 address (the policy handles IPv4-mapped IPv6 itself).
 */
export function cidrContains(range: CidrRange, address: IpAddress): boolean {
  if (range.family !== address.family) return false;
  const masked = maskBytes(address.bytes, range.prefixLength);
  return masked.every((b, i) => b === range.bytes[i]);
}

/** Parses a range known to be valid (the built-in tables); throws on a typo there. */
export function cidr(text: string): CidrRange {
  const range = parseCidr(text);
  if (range === null) throw new Error(`built-in CIDR ${JSON.stringify(text)} is malformed`);
  return range;
}

function maskBytes(bytes: Uint8Array, prefixLength: number): Uint8Array {
  const out = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) {
    const bits = Math.max(0, Math.min(8, prefixLength - 8 * i));
    out[i] = bytes[i]! & ((0xff << (8 - bits)) & 0xff);
  }
  return out;
}
