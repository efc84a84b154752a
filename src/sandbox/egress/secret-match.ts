/**
 * Which of the operator's secrets the proxy adds for one destination: those the run's
 * policy opts into by name whose host rules cover the host and port. Pure.
 *
 * @module
 */

import { type EgressPolicy, ruleMatches } from '../../contract/index.js';
import type { EgressSecret } from './egress-types.js';

/** The secrets for `host` (normalized) on `port`, in the operator's order. */
export function secretsFor(
  secrets: readonly EgressSecret[],
  policy: EgressPolicy,
  host: string,
  port: number,
): EgressSecret[] {
  if (policy.secrets.length === 0) return [];
  return secrets.filter(
    (s) => policy.secrets.includes(s.name) && s.hosts.some((r) => ruleMatches(r, host, port)),
  );
}
