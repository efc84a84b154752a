/**
 * The consent gate: the one place that decides whether a call the workbench cannot
 * serve may run on one of its caller's worker hosts. A function of data (the call,
 * the user's consent rows, the user's workers) so it is decided before any frame goes
 * to a worker and tested without one. There is no second copy: a copy elsewhere (in a
 * tool loop, say) would drift toward what reads as safe, and a card asking for less
 * than the ladder says would be approved for less than what then runs.
 *
 * In order:
 * 1. an action worker hosts do not serve is not rerouted (the mismatch stands);
 * 2. the user's kill switch over every worker: `kill_switch_engaged`, never a card;
 * 3. no connected worker of the caller's offers every label the call needs:
 *    `worker_unavailable`, naming what each worker lacks;
 * 4. every such worker has its own kill switch on: `kill_switch_engaged`;
 * 5. a worker whose standing scope covers the call's tier: it runs there (the least
 *    loaded of them);
 * 6. otherwise `consent_required` for the worker holding the most scope.
 *
 * @module
 */

import {
  type ActionName,
  isWorkerAction,
  SCOPES,
  type Scope,
  scopeCovers,
  type UnmetNeed,
  type WorkerLack,
} from '../contract/index.js';
import { workerLabels, workerRequirement } from './worker-scope.js';

/** One of the caller's workers as the gate sees it. */
export interface GateWorker {
  readonly workerId: string;
  readonly os: string;
  readonly provides: readonly string[];
  readonly connected: boolean;
  /** Calls in flight on it (connected workers). */
  readonly inFlight: number;
}

/** The user's consent as the gate reads it. */
export interface GateConsent {
  /** The kill switch over every worker. */
  readonly allKilled: boolean;
  /** Per worker: standing scope and kill switch; absent is `none`, switch off. */
  readonly workers: ReadonlyMap<string, { readonly scope: Scope; readonly killSwitch: boolean }>;
}

/** A call the workbench answered `environment_mismatch`. */
export interface GateCall {
  readonly action: ActionName;
  readonly unmetNeeds: readonly UnmetNeed[];
  /** The hint's `os`, when it set one. */
  readonly hintOs?: string;
}

/** What the gate decided. */
export type GateDecision =
  | { readonly kind: 'not_reroutable' }
  | { readonly kind: 'kill_switch'; readonly workerIds: readonly string[] }
  | {
      readonly kind: 'no_worker';
      readonly requiredScope: Scope;
      readonly labels: readonly string[];
      readonly workers: readonly WorkerLack[];
    }
  | {
      readonly kind: 'consent_required';
      readonly workerId: string;
      readonly requiredScope: Scope;
      readonly heldScope: Scope;
    }
  | {
      readonly kind: 'run';
      readonly workerId: string;
      readonly requiredScope: Scope;
      /** The standing scope it runs under. */
      readonly scope: Scope;
    };

function consentOf(consent: GateConsent, workerId: string): { scope: Scope; killSwitch: boolean } {
  return consent.workers.get(workerId) ?? { scope: 'none', killSwitch: false };
}

/** Decides where a mismatched call goes. Pure. */
export function decideReroute(
  call: GateCall,
  consent: GateConsent,
  workers: readonly GateWorker[],
): GateDecision {
  if (!isWorkerAction(call.action)) return { kind: 'not_reroutable' };
  if (consent.allKilled) return { kind: 'kill_switch', workerIds: [] };
  const required = workerRequirement(call.action, call.unmetNeeds, call.hintOs);
  const lacks = workers.map((w): WorkerLack => {
    const offered = workerLabels(w);
    return {
      workerId: w.workerId,
      connected: w.connected,
      missing: required.labels.filter((label) => !offered.has(label)),
    };
  });
  const capable = workers.filter((w, i) => w.connected && lacks[i]!.missing.length === 0);
  if (capable.length === 0) {
    return {
      kind: 'no_worker',
      requiredScope: required.scope,
      labels: required.labels,
      workers: lacks,
    };
  }
  const open = capable.filter((w) => !consentOf(consent, w.workerId).killSwitch);
  if (open.length === 0) return { kind: 'kill_switch', workerIds: capable.map((w) => w.workerId) };
  const covered = open
    .filter((w) => scopeCovers(consentOf(consent, w.workerId).scope, required.scope))
    .sort((a, b) => a.inFlight - b.inFlight || a.workerId.localeCompare(b.workerId));
  const chosen = covered[0];
  if (chosen) {
    return {
      kind: 'run',
      workerId: chosen.workerId,
      requiredScope: required.scope,
      scope: consentOf(consent, chosen.workerId).scope,
    };
  }
  const rank = (w: GateWorker) => SCOPES.indexOf(consentOf(consent, w.workerId).scope);
  const ask = [...open].sort(
    (a, b) => rank(b) - rank(a) || a.workerId.localeCompare(b.workerId),
  )[0]!;
  return {
    kind: 'consent_required',
    workerId: ask.workerId,
    requiredScope: required.scope,
    heldScope: consentOf(consent, ask.workerId).scope,
  };
}
