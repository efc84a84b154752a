/**
 * Admission of a parsed call: what every process boundary checks before a
 * `workbenchHost` call goes further, the agent before it routes and the workbench
 * node's mesh service before it runs a forwarded call. Two checks, in order: the
 * environment hint against what a workbench provides (`environment_mismatch`), then
 * the authority's right to the action (`build_not_permitted`). The hint is the typed
 * one the envelope parse read (a malformed hint is `invalid_environment_hint` there),
 * so it is evaluated here, not parsed again. One function, so both sides answer alike.
 *
 * @module
 */

import { type Authority, checkActionAuthority } from './authority.js';
import type { Envelope } from './envelope.js';
import {
  environmentFailure,
  evaluateEnvironment,
  WORKBENCH_OS,
  WORKBENCH_PROVIDES,
} from './environment.js';
import type { DispatchFailure } from './result.js';

/**
 * Whether a workbench may take `envelope` on `authority`'s behalf: `null` when it may,
 * else the failure to answer. Pure.
 */
export function admitEnvelope(
  envelope: Envelope,
  authority: Authority | undefined,
): DispatchFailure | null {
  return (
    environmentFailure(
      evaluateEnvironment(envelope.environment, WORKBENCH_PROVIDES, WORKBENCH_OS),
    ) ?? checkActionAuthority(envelope.action, authority)
  );
}
