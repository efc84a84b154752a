/**
 * A run's network policy as callers write it and the API shows it (`network: {allow,
 * secrets}`), and the two checks every change passes: the shape (each rule a host rule,
 * each secret a name) and the operator's bounds (every rule within the ceiling
 * `MEMQL_EGRESS_CEILING`, every secret one `MEMQL_EGRESS_SECRETS` defines). Pure; the
 * API calls both before anything is written, and the workbench narrows what it reads
 * by the same ceiling again, so a ceiling lowered later still holds.
 *
 * Who may change a run's network: its owner, with either kind of token. An agent token
 * (a tool loop's) may, because the ceiling is the guard: a model can only ask for what
 * the operator already allowed every run, never for more.
 *
 * @module
 */

import {
  type EgressPolicy,
  formatHostRule,
  type HostRule,
  MAX_HOST_RULES,
  parseHostRule,
  withinCeiling,
} from './egress-policy.js';

/** A run's network policy on the wire: rules as written, secrets by name. */
export interface RunNetwork {
  /** Host rules (`pypi.org`, `*.npmjs.org`, `github.com:443`), in their canonical form. */
  readonly allow: readonly string[];
  /** Names of operator-defined secrets the run opts into. */
  readonly secrets: readonly string[];
}

/** A run's network as a caller asks for it (`network` of a new run, or a replacement). */
export interface RunNetworkRequest {
  /** Host rules within the operator's ceiling; `[]`: no network. */
  readonly allow: readonly string[];
  /** Operator-defined secrets to opt into, by name. Default none. */
  readonly secrets?: readonly string[];
}

/** A run without network: what every run has unless it is given rules. */
export const NO_RUN_NETWORK: RunNetwork = Object.freeze({ allow: [], secrets: [] });

/** Most secrets one run may opt into. */
export const MAX_RUN_SECRETS = 32;

/** The name of an operator-defined secret: lower-case letters, digits, `-` and `_`. */
export const SECRET_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** What the operator lets runs have: the ceiling and the names of the defined secrets. */
export interface EgressBounds {
  /** `MEMQL_EGRESS_CEILING`; empty: no run may have network. */
  readonly ceiling: readonly HostRule[];
  /** The names `MEMQL_EGRESS_SECRETS` defines. */
  readonly secretNames: readonly string[];
}

/** A run network request that has the right shape, parsed. */
export interface ParsedRunNetwork {
  /** The canonical wire form (rules formatted, duplicates dropped, order kept). */
  readonly network: RunNetwork;
  /** The parsed rules, in the same order. */
  readonly rules: readonly HostRule[];
}

/** Why a request does not have the right shape: the field and the problem. */
export interface RunNetworkProblem {
  /** `network.allow[2]`, `network.secrets`, ... */
  readonly field: string;
  readonly problem: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses a `{allow, secrets?}` object. `field` is how the message names it (`network`
 * in `POST /v1/runs`, `body` in `PUT /v1/runs/:runId/network`).
 */
export function parseRunNetwork(
  value: unknown,
  field = 'network',
): { ok: true; value: ParsedRunNetwork } | ({ ok: false } & RunNetworkProblem) {
  const fail = (at: string, problem: string) => ({ ok: false as const, field: at, problem });
  if (!isRecord(value)) return fail(field, 'expected an object {allow: [host rules], secrets?}');
  for (const key of Object.keys(value)) {
    if (key !== 'allow' && key !== 'secrets') {
      return fail(`${field}.${key}`, 'unknown field; expected only allow and secrets');
    }
  }
  const { allow, secrets = [] } = value;
  if (!Array.isArray(allow)) {
    return fail(
      `${field}.allow`,
      'expected an array of host rules such as "pypi.org", "*.npmjs.org" or "github.com:443" ([] for no network)',
    );
  }
  if (allow.length > MAX_HOST_RULES) {
    return fail(`${field}.allow`, `at most ${MAX_HOST_RULES} rules`);
  }
  const rules: HostRule[] = [];
  const texts: string[] = [];
  for (const [i, entry] of allow.entries()) {
    if (typeof entry !== 'string') return fail(`${field}.allow[${i}]`, 'expected a string');
    const parsed = parseHostRule(entry);
    if (!parsed.ok) return fail(`${field}.allow[${i}]`, parsed.problem);
    const text = formatHostRule(parsed.rule);
    if (texts.includes(text)) continue;
    texts.push(text);
    rules.push(parsed.rule);
  }
  if (!Array.isArray(secrets)) {
    return fail(`${field}.secrets`, 'expected an array of secret names, or leave it out');
  }
  if (secrets.length > MAX_RUN_SECRETS) {
    return fail(`${field}.secrets`, `at most ${MAX_RUN_SECRETS} secrets`);
  }
  const names: string[] = [];
  for (const [i, name] of secrets.entries()) {
    if (typeof name !== 'string' || !SECRET_NAME_PATTERN.test(name)) {
      return fail(
        `${field}.secrets[${i}]`,
        'expected a secret name (lower-case letters, digits, "-" and "_")',
      );
    }
    if (!names.includes(name)) names.push(name);
  }
  return { ok: true, value: { network: { allow: texts, secrets: names }, rules } };
}

/** An `egress_not_allowed` refusal: what the message says, and the same as data. */
export interface EgressRefusal {
  readonly message: string;
  readonly payload: {
    /** The rules the ceiling does not cover, as written. */
    readonly outside: readonly string[];
    /** The secrets the operator did not define. */
    readonly unknownSecrets: readonly string[];
    /** The ceiling, as written. */
    readonly ceiling: readonly string[];
    /** The secrets the operator defined. */
    readonly secrets: readonly string[];
  };
}

/** A list for a message: `a, b and c`, or `none`. */
function listed(items: readonly string[], none: string): string {
  if (items.length === 0) return none;
  return items.map((i) => `"${i}"`).join(', ');
}

/**
 * The operator's bounds applied to a parsed request: null when every rule is within the
 * ceiling and every secret is defined, else the refusal. The message names the rules
 * and secrets refused, the settings that bound them and what they allow; it says who
 * can widen them (the operator), never how.
 */
export function checkRunNetwork(
  request: ParsedRunNetwork,
  bounds: EgressBounds,
): EgressRefusal | null {
  const outside = withinCeiling(bounds.ceiling, request.rules).outside.map(formatHostRule);
  const unknownSecrets = request.network.secrets.filter((s) => !bounds.secretNames.includes(s));
  if (outside.length === 0 && unknownSecrets.length === 0) return null;
  const ceiling = bounds.ceiling.map(formatHostRule);
  const parts: string[] = [];
  if (outside.length > 0) {
    parts.push(
      `${listed(outside, '')} ${outside.length === 1 ? 'is' : 'are'} outside the operator's egress ceiling (MEMQL_EGRESS_CEILING), which ${
        ceiling.length === 0
          ? 'is empty on this deployment: no run may have network'
          : `allows ${listed(ceiling, '')} (a run may only narrow it)`
      }`,
    );
  }
  if (unknownSecrets.length > 0) {
    parts.push(
      `${unknownSecrets.length === 1 ? 'secret' : 'secrets'} ${listed(unknownSecrets, '')} ${
        unknownSecrets.length === 1 ? 'is' : 'are'
      } not defined by the operator (MEMQL_EGRESS_SECRETS defines ${listed(bounds.secretNames, 'none')})`,
    );
  }
  return {
    message: `egress_not_allowed: ${parts.join('; ')}. Nothing changed; only the operator can widen these settings.`,
    payload: { outside, unknownSecrets, ceiling, secrets: [...bounds.secretNames] },
  };
}

/**
 * The policy a run's stored network gives, narrowed by the bounds in force now: a rule
 * that no longer parses or is no longer within the ceiling, and a secret no longer
 * defined, are left out. What the proxy enforces.
 */
export function effectivePolicy(stored: RunNetwork, bounds: EgressBounds): EgressPolicy {
  const rules: HostRule[] = [];
  for (const text of stored.allow) {
    const parsed = parseHostRule(text);
    if (parsed.ok) rules.push(parsed.rule);
  }
  return {
    allow: withinCeiling(bounds.ceiling, rules).within,
    secrets: stored.secrets.filter((s) => bounds.secretNames.includes(s)),
  };
}
