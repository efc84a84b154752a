/**
 * The destination a proxy request names: `CONNECT host:port` (authority form) or
 * `GET http://host[:port]/path` (absolute form, RFC 9112 section 3.2). Parsed strictly
 * and by hand rather than by a URL parser, so the host the policy checks is the exact
 * text the client sent: a URL parser would quietly turn `0x7f.1` into `127.0.0.1` or
 * decode escapes, and the policy (`normalizeHostName`) refuses such hosts as they are.
 * Pure.
 *
 * @module
 */

/** A parsed destination: the host as written (brackets kept for IPv6) and the port. */
export interface RequestTarget {
  readonly host: string;
  readonly port: number;
  /** For the absolute form: the path and query, as sent (`/` when empty). */
  readonly path: string;
}

/** A target that is not one, with the clause the refusal says. */
export interface BadTarget {
  readonly problem: string;
  /** What of the target could be shown, printable. */
  readonly shown: string;
}

/** Parses `host:port`, or `host` with `defaultPort` when one is given. */
export function parseAuthority(
  text: string,
  defaultPort: number | null,
): { host: string; port: number } | { problem: string } {
  if (text.includes('@')) return { problem: 'the target carries credentials (user@host)' };
  const m = /^(\[[^\]]*\]|[^:[\]]*)(?::([0-9]*))?$/.exec(text);
  if (m === null || m[1] === '') return { problem: 'the target is not host:port' };
  const host = m[1]!;
  if (m[2] === undefined || m[2] === '') {
    if (defaultPort === null) return { problem: 'the target has no port (CONNECT host:port)' };
    return { host, port: defaultPort };
  }
  const port = Number(m[2]);
  if (m[2].length > 5 || port < 1 || port > 65_535)
    return { problem: 'the port is not 1 to 65535' };
  return { host, port };
}

/**
 * Parses an absolute-form request target. Only `http:` is served this way: an
 * `https:` URL goes through CONNECT, so the proxy never sees its plaintext.
 */
export function parseAbsoluteHttp(url: string): RequestTarget | BadTarget {
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([^/?#]*)([^#]*)/.exec(url);
  if (m === null) {
    return {
      problem:
        'the request is not a proxy request (expected an absolute URI, GET http://host/path)',
      shown: shown(url),
    };
  }
  const scheme = m[1]!.toLowerCase();
  if (scheme !== 'http') {
    return {
      problem:
        scheme === 'https'
          ? 'an https:// URL is sent through CONNECT, not as a plain request'
          : `the ${scheme}: scheme is not served; only http:// and CONNECT`,
      shown: shown(m[2]!),
    };
  }
  const authority = parseAuthority(m[2]!, 80);
  if ('problem' in authority) return { problem: authority.problem, shown: shown(m[2]!) };
  const rest = m[3]!;
  const path = rest === '' ? '/' : rest.startsWith('?') ? `/${rest}` : rest;
  return { host: authority.host, port: authority.port, path };
}

/** Whether `t` is a parse failure. */
export function isBadTarget(t: RequestTarget | BadTarget): t is BadTarget {
  return 'problem' in t;
}

/**
 * Whether a Host header value names `host` on `port` (`defaultPort` when it has no
 * port): compared as the policy compares names, case and a trailing dot aside.
 */
export function hostHeaderAgrees(
  header: string,
  host: string,
  port: number,
  defaultPort: number,
): boolean {
  const parsed = parseAuthority(header.trim(), defaultPort);
  if ('problem' in parsed) return false;
  const name = (s: string) => s.toLowerCase().replace(/\.$/, '');
  return name(parsed.host) === name(host) && parsed.port === port;
}

function shown(text: string): string {
  return text.replace(/[^\x21-\x7e]/g, '?').slice(0, 255) || '(none)';
}
