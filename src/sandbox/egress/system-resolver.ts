/**
 * The resolver a node gives the proxy: `getaddrinfo` through `node:dns`, every
 * address. Tests give a map instead.
 *
 * @module
 */

import { lookup } from 'node:dns/promises';

/** All addresses of `host`, as text. */
export async function systemResolve(host: string): Promise<string[]> {
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map((a) => a.address);
}
