/**
 * The table beside the consent gate: for each need of the environment hint, the scope
 * a call needing it takes on a worker host and the routing labels a worker must offer
 * to be chosen. The need vocabulary is the contract's (`NEEDS`); this table only says
 * what each costs. A need missing from the table, and so any set that holds one, takes
 * `full`: an unknown need asking for the narrower tier is how a user would approve a
 * card for less than what then runs.
 *
 * @module
 */

import {
  actionScope,
  higherScope,
  NEEDS,
  type Need,
  type Scope,
  type UnmetNeed,
  type WorkerActionName,
} from '../contract/index.js';

/** What one need costs on a worker host. */
export interface NeedRoute {
  /** The lowest standing scope a call needing it may run under. */
  readonly scope: Scope;
  /** Labels a worker must offer (see {@link workerLabels}) to take the call. */
  readonly labels: readonly string[];
}

/**
 * Need to scope and labels. Reading the user's files is observation; driving a
 * display, a GPU or macOS tooling acts on the machine, so it takes `full` even for a
 * reading action.
 */
export const NEED_ROUTES: Readonly<Partial<Record<Need, NeedRoute>>> = Object.freeze({
  user_files: { scope: 'observe', labels: ['user_files'] },
  display: { scope: 'full', labels: ['display'] },
  gpu: { scope: 'full', labels: ['gpu'] },
  macos_tooling: { scope: 'full', labels: ['macos_tooling'] },
});

/** The label an OS requirement becomes: `os:<goos>`. */
export function osLabel(os: string): string {
  return `os:${os}`;
}

/** The labels a worker offers: each need it provides and its OS. */
export function workerLabels(offer: { os: string; provides: readonly string[] }): Set<string> {
  return new Set([...offer.provides, osLabel(offer.os)]);
}

/** What a rerouted call requires of the worker it runs on. */
export interface WorkerRequirement {
  /** The lowest standing scope it may run under: the action's and every need's, the highest. */
  readonly scope: Scope;
  /** Labels the worker must offer, sorted. */
  readonly labels: readonly string[];
}

/**
 * What a call with these unmet needs requires of a worker. `os` (an output-only
 * reason) becomes the label of the hint's OS; needs without a table entry take `full`
 * and their own name as label.
 */
export function workerRequirement(
  action: WorkerActionName,
  unmetNeeds: readonly UnmetNeed[],
  hintOs: string | undefined,
): WorkerRequirement {
  let scope = actionScope(action);
  const labels = new Set<string>();
  for (const need of unmetNeeds) {
    if (need === 'os') {
      if (hintOs !== undefined) labels.add(osLabel(hintOs));
      continue;
    }
    const route = (NEEDS as readonly string[]).includes(need) ? NEED_ROUTES[need] : undefined;
    if (route === undefined) {
      scope = 'full';
      labels.add(need);
      continue;
    }
    scope = higherScope(scope, route.scope);
    for (const label of route.labels) labels.add(label);
  }
  return { scope, labels: [...labels].sort() };
}
