import { isIPv4, isIPv6 } from 'node:net';
import { fail, ok, type Parsed } from './parsed.js';

/** An address range in CIDR notation, such as `127.0.0.0/8` or `fd00::/8`. */
export interface Cidr {
  /** IP version of the range. */
  readonly family: 4 | 6;
  /** The address part as written (host bits are not cleared; matchers mask). */
  readonly address: string;
  /** Prefix length in bits: 0..32 for IPv4, 0..128 for IPv6. */
  readonly prefixLength: number;
  /** The range as written, trimmed, for logs. */
  readonly text: string;
}

/**
 * Parses one CIDR range, IPv4 or IPv6. The prefix length is required: a bare
 * address is refused so that nobody opens `10.0.0.0` meaning `/8` and gets `/32`,
 * or the reverse. Pure. On failure, `expected` says what is wrong.
 */
export function parseCidr(text: string): Parsed<Cidr> {
  const slash = text.indexOf('/');
  if (slash < 0) return fail('the "/prefix" is missing (write 10.0.0.1/32 for one address)');
  const address = text.slice(0, slash);
  const prefixText = text.slice(slash + 1);
  const family = isIPv4(address) ? 4 : isIPv6(address) ? 6 : null;
  if (family === null) return fail(`${JSON.stringify(address)} is not an IPv4 or IPv6 address`);
  const max = family === 4 ? 32 : 128;
  const prefixLength = /^[0-9]{1,3}$/.test(prefixText) ? Number(prefixText) : Number.NaN;
  if (!(prefixLength >= 0 && prefixLength <= max)) {
    return fail(`the prefix length must be 0 to ${max}, not ${JSON.stringify(prefixText)}`);
  }
  return ok({ family, address, prefixLength, text });
}
