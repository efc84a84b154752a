/**
 * Which addresses the node may connect to on an agent's behalf: `fetch` and the
 * sandbox egress proxy both decide with it. Pure: no DNS, no sockets.
 *
 * The node connects on an agent's behalf from inside the platform's network, so an
 * unchecked host could reach the node's own services, the cluster, or a cloud
 * metadata endpoint that hands out credentials. Every address is classified
 * (`classifyAddress`, the contract's one address table) before any connection;
 * only `public` ones pass, unless the operator's allow list covers the address.
 * Cloud metadata addresses never pass.
 *
 * @module
 */

import { type AddressClass, classifyAddress } from './address-class.js';
import { type CidrRange, cidrContains } from './cidr-range.js';
import { formatAddress, type IpAddress } from './ip-address.js';

/** The policy's answer for one address, allow list applied. */
export interface AddressVerdict extends AddressClass {
  /** Whether the node may connect to this address. */
  readonly allowed: boolean;
  /** The address as printed in messages and payloads. */
  readonly address: string;
  /** The allow-list range that let a blocked address through, if any. */
  readonly allowedBy?: string;
}

/**
 * Decides whether the node may connect to `address`: allowed when its category is
 * `public`, or when a range in `allow` contains it (an IPv4-mapped IPv6 address
 * also matches IPv4 ranges, being the same socket destination). A
 * `cloud-metadata` or `invalid` address is refused whatever the allow list says.
 */
export function evaluateAddress(address: IpAddress, allow: readonly CidrRange[]): AddressVerdict {
  const verdict = classifyAddress(address);
  const printed = formatAddress(address);
  if (!verdict.blocked) return { ...verdict, allowed: true, address: printed };
  if (verdict.category === 'cloud-metadata' || verdict.category === 'invalid') {
    return { ...verdict, allowed: false, address: printed };
  }
  const mapped =
    verdict.via === 'ipv4-mapped' ? { family: 4 as const, bytes: address.bytes.slice(12) } : null;
  const match = allow.find(
    (range) => cidrContains(range, address) || (mapped !== null && cidrContains(range, mapped)),
  );
  return match === undefined
    ? { ...verdict, allowed: false, address: printed }
    : { ...verdict, allowed: true, address: printed, allowedBy: match.text };
}
