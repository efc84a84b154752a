/**
 * What a run's commands may reach on the network: a list of host rules, each a domain
 * name (exact, or `*.` and a suffix) with an optional port, checked by the egress proxy
 * outside the sandbox on the host name a command asked for. Network is off unless a run
 * is given rules; an operator's ceiling bounds what any run may be given, and a run can
 * only narrow it. Pure: the proxy resolves the name and checks the addresses itself.
 *
 * A rule names hosts, never addresses: `pypi.org`, `*.pythonhosted.org`,
 * `github.com:443`. A wildcard matches any name below its suffix (`*.npmjs.org` matches
 * `registry.npmjs.org` and `a.b.npmjs.org`), not the suffix itself. Names are compared
 * in lower case, without a trailing dot; names outside ASCII are given in their
 * `xn--` form.
 *
 * @module
 */

/** One allowed destination. */
export interface HostRule {
  /** The name in lower case, or `*.` and a suffix. */
  readonly host: string;
  /** The one port allowed, or null for any port. */
  readonly port: number | null;
}

/** What a run's commands may reach. */
export interface EgressPolicy {
  /** The hosts a command may connect to; empty: no network. */
  readonly allow: readonly HostRule[];
  /**
   * Names of operator-defined secrets the run opts into: the proxy adds each to
   * requests to that secret's hosts, and the secret never enters the sandbox.
   */
  readonly secrets: readonly string[];
}

/** No network: what a run has unless it is given rules. */
export const NO_EGRESS: EgressPolicy = Object.freeze({ allow: [], secrets: [] });

/** Most rules one policy holds. */
export const MAX_HOST_RULES = 256;

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * A host name as the proxy compares it (lower case, no trailing dot), or null when it
 * is not a DNS name: an IP address literal, an empty label, a label over 63
 * characters or outside `[a-z0-9-]`, or over 253 characters.
 */
export function normalizeHostName(name: string): string | null {
  const host = name.toLowerCase().replace(/\.$/, '');
  if (host.length === 0 || host.length > 253) return null;
  const labels = host.split('.');
  if (!labels.every((l) => LABEL.test(l))) return null;
  // A last label that is a number (decimal, or hex as 0x...) makes the whole an IPv4
  // address to resolvers and URL parsers (`0x7f000001`, `127.1`): not a name.
  if (/^([0-9]+|0x[0-9a-f]*)$/.test(labels[labels.length - 1]!)) return null;
  return host;
}

/** Parses one rule (`host`, `*.suffix`, either with `:port`). */
export function parseHostRule(
  text: string,
): { ok: true; rule: HostRule } | { ok: false; problem: string } {
  const trimmed = text.trim();
  const m = /^([^:\s]+)(?::([0-9]{1,5}))?$/.exec(trimmed);
  if (!m) {
    return {
      ok: false,
      problem: `"${text}" is not a host rule: expected host, *.suffix or host:port`,
    };
  }
  let port: number | null = null;
  if (m[2] !== undefined) {
    port = Number(m[2]);
    if (port < 1 || port > 65_535) {
      return { ok: false, problem: `"${text}": the port must be 1 to 65535` };
    }
  }
  const raw = m[1]!;
  const wildcard = raw.startsWith('*.');
  const name = normalizeHostName(wildcard ? raw.slice(2) : raw);
  if (name === null || raw.slice(wildcard ? 2 : 0).includes('*')) {
    return {
      ok: false,
      problem: `"${text}": expected a DNS name (letters, digits, hyphens; "*." only as the first label), not an address`,
    };
  }
  if (wildcard && !name.includes('.')) {
    return { ok: false, problem: `"${text}": a wildcard needs a suffix of two labels or more` };
  }
  return { ok: true, rule: { host: wildcard ? `*.${name}` : name, port } };
}

/** A rule as it is written (`*.npmjs.org`, `github.com:443`). */
export function formatHostRule(rule: HostRule): string {
  return rule.port === null ? rule.host : `${rule.host}:${rule.port}`;
}

function hostMatches(pattern: string, host: string): boolean {
  if (!pattern.startsWith('*.')) return pattern === host;
  return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
}

/** Whether `rule` lets a command reach `host` (normalized) on `port`. */
export function ruleMatches(rule: HostRule, host: string, port: number): boolean {
  return (rule.port === null || rule.port === port) && hostMatches(rule.host, host);
}

/** The first rule of `policy` that lets a command reach `host:port`, or null. */
export function allowingRule(policy: EgressPolicy, host: string, port: number): HostRule | null {
  const name = normalizeHostName(host);
  if (name === null) return null;
  return policy.allow.find((r) => ruleMatches(r, name, port)) ?? null;
}

/** Whether every destination `inner` allows is allowed by `outer`. */
export function ruleCovers(outer: HostRule, inner: HostRule): boolean {
  if (outer.port !== null && outer.port !== inner.port) return false;
  if (!outer.host.startsWith('*.')) return outer.host === inner.host;
  // A wildcard covers the names below its suffix, and the wildcards below it.
  const suffix = outer.host.slice(1);
  const name = inner.host.startsWith('*.') ? inner.host.slice(1) : inner.host;
  return name === suffix ? inner.host.startsWith('*.') : name.endsWith(suffix);
}

/**
 * Splits `requested` rules into those the operator's `ceiling` covers and those it does
 * not: a run may only narrow the ceiling.
 */
export function withinCeiling(
  ceiling: readonly HostRule[],
  requested: readonly HostRule[],
): { within: HostRule[]; outside: HostRule[] } {
  const within: HostRule[] = [];
  const outside: HostRule[] = [];
  for (const rule of requested) {
    (ceiling.some((c) => ruleCovers(c, rule)) ? within : outside).push(rule);
  }
  return { within, outside };
}
