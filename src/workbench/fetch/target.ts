/**
 * One hop of a fetch, before any connection: parse the URL, check its scheme,
 * resolve its host, and vet every address it resolves to.
 *
 * The answer names exactly one vetted address; the request connects to that
 * address and nothing else, so DNS is consulted once per hop and a second
 * answer (DNS rebinding) never reaches a socket.
 *
 * @module
 */

import { lookup } from 'node:dns/promises';
import {
  type CidrRange,
  evaluateAddress,
  formatAddress,
  type IpAddress,
  parseHostAddress,
  parseIpAddress,
} from '../../contract/index.js';
import { blockedAddressError, FetchError } from './error.js';

/** One address a resolver returned. */
export interface ResolvedAddress {
  /** The address as text (`93.184.215.14`, `2606:2800::1`). */
  readonly address: string;
  /** 4 or 6. */
  readonly family: number;
}

/** Resolves a host name to all of its addresses. Injected so tests never touch DNS. */
export type HostResolver = (host: string) => Promise<readonly ResolvedAddress[]>;

/** The default resolver: `getaddrinfo` through `node:dns`, all addresses. */
export const systemResolver: HostResolver = async (host) => {
  const found = await lookup(host, { all: true });
  return found.map(({ address, family }) => ({ address, family }));
};

/** A hop that passed the policy: where to connect and what to say to it. */
export interface VettedTarget {
  /** The URL of this hop. */
  readonly url: URL;
  /** The host without brackets: the TLS server name when it is a name. */
  readonly hostname: string;
  /** True when the host was a name (resolved), false for an address literal. */
  readonly isName: boolean;
  /** The vetted address to connect to, with its zone if it had one. */
  readonly address: string;
  /** Its family. */
  readonly family: 4 | 6;
  /** The port, defaulted from the scheme. */
  readonly port: number;
}

/**
 * Parses the URL of a hop and applies the URL rules: only `http:` and `https:`,
 * and no credentials (`user:pass@`), which are refused rather than stripped so
 * that a URL never means something other than it says. A bad first URL is
 * `invalid_arguments`; a bad redirect target is `fetch_failed` (`bad_redirect`).
 */
export function parseHopUrl(text: string, base: URL | undefined, redirects: number): URL {
  let url: URL;
  try {
    url = base === undefined ? new URL(text) : new URL(text, base);
  } catch {
    throw base === undefined
      ? new FetchError(
          'invalid_arguments',
          'invalid_arguments: the url is not an absolute URL; give an http:// or https:// URL',
          { category: 'options' },
        )
      : new FetchError(
          'fetch_failed',
          `fetch_failed: ${base.href} redirected to a Location that is not a URL; the server's redirect is broken`,
          { url: base.href, category: 'bad_redirect', redirects },
        );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    const where = base === undefined ? '' : ` (a redirect from ${base.href})`;
    throw new FetchError(
      'fetch_blocked',
      `fetch_blocked: the ${url.protocol} scheme${where} is not allowed; fetch only downloads http:// and https:// URLs`,
      { url: url.href, category: 'scheme', redirects },
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new FetchError(
      'fetch_blocked',
      'fetch_blocked: the URL carries credentials (user:password@); fetch does not send them, so remove them from the URL',
      { url: redactUserinfo(url), host: url.hostname, category: 'userinfo', redirects },
    );
  }
  return url;
}

/**
 * Resolves the hop's host (an address literal in any notation is not resolved),
 * vets every address, and returns the first. One blocked address refuses the
 * whole hop: a name that resolves to a public and a private address is how DNS
 * rebinding picks its target.
 */
export async function vetTarget(
  url: URL,
  resolver: HostResolver,
  allow: readonly CidrRange[],
  redirects: number,
): Promise<VettedTarget> {
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const host = parseHostAddress(hostname);
  if (host.kind === 'invalid') {
    throw new FetchError('fetch_blocked', `fetch_blocked: the host is unusable: ${host.reason}`, {
      url: url.href,
      host: hostname,
      category: 'invalid',
      redirects,
    });
  }
  const addresses =
    host.kind === 'ip' ? [host.address] : await resolveAll(resolver, host.name, url, redirects);
  for (const address of addresses) {
    const verdict = evaluateAddress(address, allow);
    if (!verdict.allowed) {
      throw blockedAddressError(verdict, {
        url: url.href,
        host: hostname,
        resolved: host.kind === 'name',
        redirects,
      });
    }
  }
  const chosen = addresses[0]!;
  return {
    url,
    hostname,
    isName: host.kind === 'name',
    address:
      chosen.zone === undefined ? formatAddress(chosen) : `${formatAddress(chosen)}%${chosen.zone}`,
    family: chosen.family,
    port: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port),
  };
}

async function resolveAll(
  resolver: HostResolver,
  name: string,
  url: URL,
  redirects: number,
): Promise<IpAddress[]> {
  let found: readonly ResolvedAddress[];
  try {
    found = await resolver(name);
  } catch (err) {
    if (err instanceof FetchError) throw err; // the deadline or a cancel, raced in by the caller
    const errno = systemCode(err);
    throw new FetchError(
      'fetch_failed',
      `fetch_failed: ${name} could not be resolved${errno === undefined ? '' : ` (${errno})`}; check the host name`,
      { url: url.href, host: name, category: 'dns', redirects, ...(errno && { errno }) },
      { cause: err },
    );
  }
  if (found.length === 0) {
    throw new FetchError(
      'fetch_failed',
      `fetch_failed: ${name} resolved to no address; check the host name`,
      {
        url: url.href,
        host: name,
        category: 'dns',
        redirects,
      },
    );
  }
  return found.map((entry) => {
    const address = parseIpAddress(entry.address);
    if (address !== null) return address;
    // Fail closed: an answer that is not an address is never passed to connect().
    throw new FetchError(
      'fetch_blocked',
      `fetch_blocked: ${name} resolved to something that is not an IP address; the resolver answer is refused`,
      { url: url.href, host: name, category: 'invalid', redirects },
    );
  });
}

/** A system error code such as `ECONNREFUSED`, when `err` carries one. */
export function systemCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(code) ? code : undefined;
}

function redactUserinfo(url: URL): string {
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  return copy.href;
}
