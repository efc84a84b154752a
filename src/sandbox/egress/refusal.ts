/**
 * Why the proxy refused a connection, as a stable word, and the answer it gives: an
 * HTTP status, a reason phrase and a short text body that name the host and port,
 * the reason and what can be done, plus an `x-memql-egress` header a program can
 * match on. The reason phrase carries the gist too, because many clients (pip, git)
 * print only the status line of a failed CONNECT. Pure.
 *
 * @module
 */

/**
 * The refusal reasons. 403 unless noted:
 *
 * - `not_allowed`: the run's network policy has no rule for the host.
 * - `port_not_allowed`: a rule names the host, but on another port.
 * - `ip_literal`: the target is an IP address; the policy allows host names only.
 * - `not_a_name`: the target is neither a DNS name nor an address.
 * - `address_blocked`: the name resolves to a loopback, private, link-local, metadata
 *   or other non-public address the operator has not allowed.
 * - `sni_mismatch`: the TLS ClientHello names another server than the CONNECT host.
 * - `not_tls`: a CONNECT tunnel did not start with a TLS ClientHello.
 * - `host_mismatch`: a plain HTTP request's Host header names another host than its URL.
 * - `bad_request` (400): not a proxy request the proxy serves (origin-form, a scheme
 *   other than http, credentials in the URL, a bad CONNECT target).
 * - `dns_failed` (502): the name did not resolve to any address.
 * - `upstream_failed` (502): the checked address could not be reached, or (for a host
 *   the proxy adds a secret for) its certificate did not verify.
 */
export type RefusalReason =
  | 'not_allowed'
  | 'port_not_allowed'
  | 'ip_literal'
  | 'not_a_name'
  | 'address_blocked'
  | 'sni_mismatch'
  | 'not_tls'
  | 'host_mismatch'
  | 'bad_request'
  | 'dns_failed'
  | 'upstream_failed';

/** One refusal: what was asked for, the reason word, and what the message says of it. */
export interface Refusal {
  readonly host: string;
  readonly port: number;
  readonly reason: RefusalReason;
  /** A clause saying what went wrong, e.g. `pkgs.test resolves to 10.0.0.5 (private)`. */
  readonly detail: string;
  /** The address the refusal is about, when there was one. */
  readonly address?: string;
}

/** The HTTP status a refusal answers with. */
export function refusalStatus(reason: RefusalReason): 400 | 403 | 502 {
  if (reason === 'bad_request') return 400;
  if (reason === 'dns_failed' || reason === 'upstream_failed') return 502;
  return 403;
}

/** The value of the `x-memql-egress` header on a refusal. */
export function refusalHeader(reason: RefusalReason): string {
  return `refused; reason=${reason}`;
}

/** What can be done about a refusal, for the body. */
function remedy(refusal: Refusal, runId: string): string {
  const { host, port, reason } = refusal;
  switch (reason) {
    case 'not_allowed':
    case 'port_not_allowed':
      return (
        `The run's network policy decides which hosts its commands reach. Whoever manages ` +
        `run ${runId} can allow ${host}:${port} (PUT /v1/runs/${runId}/network, ` +
        '`memql network allow`, or the MCP tool `set_run_network`), within the hosts the operator ' +
        'allows for every run (MEMQL_EGRESS_CEILING).'
      );
    case 'ip_literal':
    case 'not_a_name':
      return 'The proxy connects to host names that a network policy allows, never to addresses: use the host name.';
    case 'address_blocked':
      return (
        'The proxy does not connect to loopback, private, link-local or cloud metadata ' +
        'addresses; an operator can allow a private range for the node ' +
        '(MEMQL_FETCH_ALLOW_PRIVATE), never cloud metadata.'
      );
    case 'sni_mismatch':
      return 'Send the same host name in CONNECT and in the TLS server name.';
    case 'not_tls':
      return 'A CONNECT tunnel carries TLS only: use an https:// URL, or a plain http:// URL through the proxy.';
    case 'host_mismatch':
      return "Send a Host header that names the URL's host (or none).";
    case 'bad_request':
      return 'Send absolute-URI requests (GET http://host/path) or CONNECT host:port to this proxy.';
    case 'dns_failed':
      return 'Check the host name.';
    case 'upstream_failed':
      return 'The host may be down or refusing connections; try again later.';
  }
}

/** The text body of a refusal, ending in a newline. */
export function refusalBody(refusal: Refusal, runId: string): string {
  return (
    `memql egress: refused ${refusal.host}:${refusal.port} (${refusal.reason}): ` +
    `${refusal.detail}.\n${remedy(refusal, runId)}\n`
  );
}

/** A reason phrase: the status line's text, printable ASCII, short. */
export function refusalPhrase(refusal: Refusal): string {
  const text = `memql egress refused ${refusal.host}:${refusal.port} (${refusal.reason})`;
  return text.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
}

/**
 * The whole HTTP/1.1 response of a refusal, as bytes to write on a raw socket (a
 * CONNECT that is refused before the tunnel opens).
 */
export function refusalResponse(refusal: Refusal, runId: string): Buffer {
  const body = Buffer.from(refusalBody(refusal, runId));
  const head = [
    `HTTP/1.1 ${refusalStatus(refusal.reason)} ${refusalPhrase(refusal)}`,
    'content-type: text/plain; charset=utf-8',
    `content-length: ${body.length}`,
    `x-memql-egress: ${refusalHeader(refusal.reason)}`,
    'connection: close',
    '',
    '',
  ].join('\r\n');
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}
