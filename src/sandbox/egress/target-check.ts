/**
 * The decision on one destination, in the order that keeps DNS out of the attacker's
 * hands: the host must be a DNS name (never an address), the run's policy must allow
 * the name on the port, the name is resolved once, and every address it resolves to
 * must pass the address policy `fetch` uses. The answer carries the checked
 * addresses; the proxy dials only those (see `pinned-lookup.ts`), so a second DNS
 * answer (rebinding) never reaches a socket.
 *
 * @module
 */

import {
  allowingRule,
  type CidrRange,
  type EgressPolicy,
  evaluateAddress,
  formatAddress,
  type HostRule,
  normalizeHostName,
  parseHostAddress,
  parseIpAddress,
  ruleMatches,
} from '../../contract/index.js';
import type { Refusal } from './refusal.js';

/** An address the policy passed, ready to dial. */
export interface CheckedAddress {
  /** The address as `connect()` takes it (zone kept). */
  readonly address: string;
  readonly family: 4 | 6;
}

/** A destination the policy allows, with its one resolution. */
export interface AllowedTarget {
  /** The host name, normalized (lower case, no trailing dot). */
  readonly host: string;
  readonly port: number;
  /** The rule that allowed it. */
  readonly rule: HostRule;
  /** Every address the name resolved to, each checked; never empty. */
  readonly addresses: readonly CheckedAddress[];
}

/** The outcome of {@link checkTarget}. */
export type TargetDecision =
  | { readonly allowed: true; readonly target: AllowedTarget }
  | { readonly allowed: false; readonly refusal: Refusal };

/** Text from a request made safe to print: printable ASCII, at most 255 characters. */
export function printable(text: string): string {
  return text.replace(/[^\x21-\x7e]/g, '?').slice(0, 255);
}

/**
 * The policy half, before any DNS: the host must be a name the run's `policy` allows on
 * `port`. Returns the normalized name and its rule, or the refusal.
 */
export function checkName(
  policy: EgressPolicy,
  rawHost: string,
  port: number,
): { ok: true; host: string; rule: HostRule } | { ok: false; refusal: Refusal } {
  const bare = rawHost.startsWith('[') && rawHost.endsWith(']') ? rawHost.slice(1, -1) : rawHost;
  const host = normalizeHostName(bare);
  if (host === null) {
    const kind = parseHostAddress(bare).kind;
    const shown = printable(rawHost);
    return kind === 'ip'
      ? refuse(shown, port, 'ip_literal', `${shown} is an IP address, not a host name`)
      : refuse(shown, port, 'not_a_name', `${shown} is not a DNS host name`);
  }
  const rule = allowingRule(policy, host, port);
  if (rule !== null) return { ok: true, host, rule };
  const ports = policy.allow
    .filter((r) => r.port !== null && ruleMatches({ ...r, port: null }, host, port))
    .map((r) => r.port);
  return ports.length > 0
    ? refuse(
        host,
        port,
        'port_not_allowed',
        `the run's network policy allows ${host} on port ${ports.join(', ')} only, not ${port}`,
      )
    : refuse(host, port, 'not_allowed', `the run's network policy does not allow ${host}:${port}`);
}

/**
 * The whole decision: {@link checkName}, then one call of `resolve`, then
 * `evaluateAddress` on every answer. One blocked address refuses the host: a name
 * that resolves to a public and a private address is how rebinding picks its target.
 */
export async function checkTarget(
  policy: EgressPolicy,
  rawHost: string,
  port: number,
  resolve: (host: string) => Promise<string[]>,
  allowPrivate: readonly CidrRange[],
): Promise<TargetDecision> {
  const named = checkName(policy, rawHost, port);
  if (!named.ok) return { allowed: false, refusal: named.refusal };
  const { host, rule } = named;
  let answers: string[];
  try {
    answers = await resolve(host);
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    const why = typeof code === 'string' && /^[A-Z_]+$/.test(code) ? ` (${code})` : '';
    return denied(host, port, 'dns_failed', `${host} could not be resolved${why}`);
  }
  if (answers.length === 0) {
    return denied(host, port, 'dns_failed', `${host} resolved to no address`);
  }
  const addresses: CheckedAddress[] = [];
  for (const answer of answers) {
    const ip = parseIpAddress(answer);
    // Fail closed: an answer that is not an address never reaches connect().
    if (ip === null) {
      return denied(
        host,
        port,
        'dns_failed',
        `${host} resolved to something that is not an address`,
      );
    }
    const verdict = evaluateAddress(ip, allowPrivate);
    if (!verdict.allowed) {
      return {
        allowed: false,
        refusal: {
          host,
          port,
          reason: 'address_blocked',
          detail: `${host} resolves to ${verdict.address} (${verdict.category})`,
          address: verdict.address,
        },
      };
    }
    const text = formatAddress(ip);
    addresses.push({
      address: ip.zone === undefined ? text : `${text}%${ip.zone}`,
      family: ip.family,
    });
  }
  return { allowed: true, target: { host, port, rule, addresses } };
}

function refuse(
  host: string,
  port: number,
  reason: Refusal['reason'],
  detail: string,
): { ok: false; refusal: Refusal } {
  return { ok: false, refusal: { host, port, reason, detail } };
}

function denied(
  host: string,
  port: number,
  reason: Refusal['reason'],
  detail: string,
): TargetDecision {
  return { allowed: false, refusal: { host, port, reason, detail } };
}
