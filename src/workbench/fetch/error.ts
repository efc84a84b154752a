/**
 * The error `fetchToFile` throws, and the messages it carries.
 *
 * Messages say what happened and what to do; they never contain response
 * bodies or headers beyond the status line's code.
 *
 * @module
 */

import { type AddressCategory, type AddressVerdict, WorkbenchError } from '../../contract/index.js';

/** The codes a fetch can fail with (a subset of the contract's codes). */
export type FetchErrorCode =
  | 'fetch_blocked'
  | 'fetch_failed'
  | 'payload_too_large'
  | 'invalid_arguments';

/**
 * Finer reason beside the code, for callers, audit events and tests.
 *
 * - `fetch_blocked`: the address category (`loopback`, `private`, `cloud-metadata`,
 *   ...), `scheme` (not http or https) or `userinfo` (credentials in the URL).
 * - `fetch_failed`: `timeout` (the whole transfer ran past `timeoutMs`), `cancelled`
 *   (the caller's signal), `dns`, `connection`, `tls`, `status` (a non-2xx final
 *   answer), `too_many_redirects`, `redirect_loop`, `bad_redirect`.
 * - `payload_too_large`: `content_length` (refused before reading) or `body`.
 * - `invalid_arguments`: `options`.
 */
export type FetchErrorCategory =
  | Exclude<AddressCategory, 'public'>
  | 'scheme'
  | 'userinfo'
  | 'timeout'
  | 'cancelled'
  | 'dns'
  | 'connection'
  | 'tls'
  | 'status'
  | 'too_many_redirects'
  | 'redirect_loop'
  | 'bad_redirect'
  | 'content_length'
  | 'body'
  | 'options';

/** Structured detail of a {@link FetchError}; only the fields that apply are set. */
export interface FetchErrorPayload {
  /** The URL of the hop that failed (after redirects, the redirect target). */
  readonly url?: string;
  /** The host of that URL, as written. */
  readonly host?: string;
  /** The address that was refused or could not be reached. */
  readonly address?: string;
  /** The finer reason; see {@link FetchErrorCategory}. */
  readonly category?: FetchErrorCategory;
  /** For an IPv6 address that carries an IPv4 address, the IPv4 address. */
  readonly embeddedIPv4?: string;
  /** The final HTTP status, when the server answered with a non-2xx one. */
  readonly status?: number;
  /** Redirects followed before the failure. */
  readonly redirects?: number;
  /** The size limit that was exceeded, in bytes. */
  readonly maxBytes?: number;
  /** The Content-Length the server announced, when it exceeded the limit. */
  readonly contentLength?: number;
  /** A system error code (`ECONNREFUSED`, `ENOTFOUND`, ...), never a message. */
  readonly errno?: string;
}

/** A fetch failure with a stable code; a {@link WorkbenchError}, so it becomes a dispatch result as is. */
export class FetchError extends WorkbenchError {
  declare readonly code: FetchErrorCode;
  declare readonly payload: FetchErrorPayload;

  /**
   * @param code - the stable code.
   * @param message - starts with the code; says what happened and what to do.
   * @param payload - structured detail (see {@link FetchErrorPayload}).
   * @param options - `cause` stays in the node.
   */
  constructor(
    code: FetchErrorCode,
    message: string,
    payload: FetchErrorPayload,
    options?: ErrorOptions,
  ) {
    super(code, message, payload, options);
    this.name = 'FetchError';
  }
}

const DESCRIPTIONS: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  'link-local': 'a link-local address',
  cgnat: 'a carrier-grade NAT (shared) address',
  multicast: 'a multicast address',
  unspecified: 'an unspecified ("this host") address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address',
  benchmarking: 'a benchmarking address',
  documentation: 'a documentation address',
  'cloud-metadata': 'a cloud metadata address',
  invalid: 'not a usable address',
};

/** Where a refused address came from, for {@link blockedAddressError}. */
export interface BlockedHop {
  /** The URL of the hop. */
  readonly url: string;
  /** Its host without brackets. */
  readonly host: string;
  /** True when the host is a name and the address is one of its DNS answers. */
  readonly resolved: boolean;
  /** Redirects followed to reach this hop. */
  readonly redirects: number;
}

/** The `fetch_blocked` error for an address the policy refused. */
export function blockedAddressError(verdict: AddressVerdict, hop: BlockedHop): FetchError {
  const what = DESCRIPTIONS[verdict.category] ?? `a ${verdict.category} address`;
  const carried =
    verdict.embeddedIPv4 === undefined
      ? ''
      : ` (it carries ${verdict.embeddedIPv4} as ${verdict.via})`;
  const subject = hop.resolved
    ? `${hop.host} resolves to ${verdict.address}, ${what}${carried}`
    : `${verdict.address} is ${what}${carried}`;
  const after =
    hop.redirects > 0 ? ` (reached through ${hop.redirects} redirect(s), at ${hop.url})` : '';
  const advice =
    verdict.category === 'cloud-metadata'
      ? 'fetch never reaches cloud metadata endpoints, whatever the allow list says'
      : 'fetch only reaches public hosts (operators can allow ranges with MEMQL_FETCH_ALLOW_PRIVATE)';
  return new FetchError('fetch_blocked', `fetch_blocked: ${subject}${after}; ${advice}`, {
    url: hop.url,
    host: hop.host,
    address: verdict.address,
    category: verdict.category as FetchErrorCategory,
    ...(verdict.embeddedIPv4 === undefined ? {} : { embeddedIPv4: verdict.embeddedIPv4 }),
    redirects: hop.redirects,
  });
}
