import { isIPv4, isIPv6 } from 'node:net';
import { fail, ok, type Parsed } from './parsed.js';

/** A host and port as written in `host:port` settings (peer seeds, listen addresses). */
export interface HostPort {
  /** DNS name, IPv4 address, or IPv6 address stored WITHOUT its brackets. */
  readonly host: string;
  /** TCP port; 0 only where {@link HostPortOptions.allowPortZero} allows it. */
  readonly port: number;
}

/** Options for {@link parseHostPort}. */
export interface HostPortOptions {
  /** Accept port 0 (ask the OS for an ephemeral port), as listen addresses do. Default `false`. */
  readonly allowPortZero?: boolean;
}

// A DNS label; underscores are tolerated because Docker's embedded DNS resolves
// compose service names that contain them.
const DNS_LABEL = /^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/;
const PORT = /^[0-9]{1,5}$/;

/**
 * Parses `host:port`, with an IPv6 host in brackets (`[::1]:50060`). Pure.
 * On failure, `expected` holds what is wrong with the text ("the \":port\" is missing");
 * callers put it after their own description of the expected shape.
 */
export function parseHostPort(text: string, options: HostPortOptions = {}): Parsed<HostPort> {
  let hostText: string;
  let portText: string;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) return fail('the "]" closing the IPv6 address is missing');
    hostText = text.slice(1, close);
    const rest = text.slice(close + 1);
    if (!rest.startsWith(':')) return fail('the ":port" after "]" is missing');
    portText = rest.slice(1);
    if (!isIPv6(hostText)) return fail(`${JSON.stringify(hostText)} is not a valid IPv6 address`);
  } else {
    const colons = text.split(':').length - 1;
    if (colons === 0) return fail('the ":port" is missing');
    if (colons > 1) return fail('an IPv6 host must be in brackets, e.g. [::1]:50060');
    const colon = text.indexOf(':');
    hostText = text.slice(0, colon);
    portText = text.slice(colon + 1);
    const hostProblem = checkHost(hostText);
    if (hostProblem !== null) return fail(hostProblem);
  }
  const min = options.allowPortZero ? 0 : 1;
  const port = PORT.test(portText) ? Number(portText) : Number.NaN;
  if (!(port >= min && port <= 65535)) {
    return fail(`the port must be ${min} to 65535, not ${JSON.stringify(portText)}`);
  }
  return ok({ host: hostText, port });
}

/** Why `host` is not a DNS name or IPv4 address, or `null` when it is one. */
function checkHost(host: string): string | null {
  if (host === '') return 'the host is missing';
  // All digits and dots reads as an IPv4 address, so it must be a valid one:
  // `10.0.0.256` is a typo, not a DNS name.
  if (/^[0-9.]+$/.test(host)) {
    return isIPv4(host) ? null : `${JSON.stringify(host)} is not a valid IPv4 address`;
  }
  if (host.length > 253 || !host.split('.').every((label) => DNS_LABEL.test(label))) {
    return `${JSON.stringify(host)} is not a valid DNS name or IPv4 address`;
  }
  return null;
}

/** Renders a host and port back to `host:port`, bracketing IPv6 hosts. */
export function formatHostPort(value: HostPort): string {
  return value.host.includes(':') ? `[${value.host}]:${value.port}` : `${value.host}:${value.port}`;
}
