/**
 * A `lookup` for `net.connect` and `http(s).request` that answers with the addresses
 * the proxy already checked and never asks DNS: the host name still goes to the
 * socket's options (for the TLS server name and certificate check), but the only
 * addresses a connection can reach are those `checkTarget` passed.
 *
 * @module
 */

import type { LookupAddress, LookupOneOptions } from 'node:dns';
import type { CheckedAddress } from './target-check.js';

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * The lookup function for a connection to `host`. Asked for any other name, it fails:
 * nothing but the checked host may be dialled through it.
 */
export function pinnedLookup(host: string, addresses: readonly CheckedAddress[]) {
  return (
    hostname: string,
    options: LookupOneOptions | { all?: boolean },
    callback: LookupCallback,
  ): void => {
    if (hostname !== host || addresses.length === 0) {
      const err: NodeJS.ErrnoException = new Error(`${hostname} was not checked by the proxy`);
      err.code = 'ENOTFOUND';
      process.nextTick(callback, err, '', 0);
      return;
    }
    if ((options as { all?: boolean }).all === true) {
      const all = addresses.map((a) => ({ address: a.address, family: a.family }));
      process.nextTick(callback, null, all);
      return;
    }
    const first = addresses[0]!;
    process.nextTick(callback, null, first.address, first.family);
  };
}
