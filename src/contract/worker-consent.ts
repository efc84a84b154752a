/**
 * The vocabulary of the reroute to worker hosts: the consent ladder, which actions a
 * worker serves, what a worker offers, and the shapes of the answers a rerouted call
 * gets. Pure data and functions; the gate that decides lives on the agent node
 * (`src/agent/consent-gate.ts`), and nothing else decides consent.
 *
 * - **Worker host**: a `memql worker` process on a user's own machine. It dials out to an
 *   agent node, authenticates with a token of the user who owns it, declares its OS and
 *   which needs hold there, and serves the file actions and `exec` against a root the
 *   user chose. It never serves another user.
 * - **Scope**: how much a user lets the agent do on one of their workers, on a ladder
 *   `none < observe < full`. `observe` permits only reading actions; `full` permits
 *   every action a worker serves.
 * - **Kill switch**: the user's deliberate "no computer use" (for every worker, or
 *   one). A call it stops is answered `kill_switch_engaged`, never with a consent
 *   request asking to turn it back on.
 *
 * @module
 */

import type { ActionName } from './actions.js';
import { NEEDS, type Need, type UnmetNeed } from './needs.js';

/** The consent ladder, lowest first. */
export const SCOPES = ['none', 'observe', 'full'] as const;

/** A rung of the consent ladder. */
export type Scope = (typeof SCOPES)[number];

/** Whether `value` is a rung of the ladder. */
export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && (SCOPES as readonly string[]).includes(value);
}

/** Whether a standing scope `held` is at or above `required`. */
export function scopeCovers(held: Scope, required: Scope): boolean {
  return SCOPES.indexOf(held) >= SCOPES.indexOf(required);
}

/** The higher of two rungs. */
export function higherScope(a: Scope, b: Scope): Scope {
  return SCOPES.indexOf(a) >= SCOPES.indexOf(b) ? a : b;
}

/**
 * The actions a worker host serves. `fetch` (the workbench's policed egress),
 * `promote_artifact` (the durable artifact store) and `build` (system only) are never
 * rerouted: a mismatch on them stays `environment_mismatch`.
 */
export const WORKER_ACTIONS = [
  'fs_read',
  'fs_list',
  'fs_write',
  'fs_delete',
  'exec',
] as const satisfies readonly ActionName[];

/** An action a worker host serves. */
export type WorkerActionName = (typeof WORKER_ACTIONS)[number];

/** Whether a worker host serves `action`. */
export function isWorkerAction(action: string): action is WorkerActionName {
  return (WORKER_ACTIONS as readonly string[]).includes(action);
}

/** The worker actions `observe` permits: those that only read. */
export const READING_WORKER_ACTIONS: readonly WorkerActionName[] = ['fs_read', 'fs_list'];

/** The scope an action needs on its own, whatever its needs: reading is `observe`. */
export function actionScope(action: WorkerActionName): Scope {
  return READING_WORKER_ACTIONS.includes(action) ? 'observe' : 'full';
}

/**
 * What a worker declares in its hello: its OS (Go's spelling) and the needs that hold
 * on its machine. Detected where the worker can, else configured by its user.
 */
export interface WorkerOffer {
  readonly os: string;
  readonly provides: readonly Need[];
  /** Calls it runs at once. */
  readonly capacity: number;
}

/** Reads the needs of an offer's `provides`, dropping names outside the closed set. */
export function offeredNeeds(values: readonly string[]): Need[] {
  const known = new Set(values);
  return NEEDS.filter((need) => known.has(need));
}

/** The route a rerouted call was sent along, carried on its answer. */
export const REROUTED_FROM = 'workbench';

/** Where a call that ran on a worker host ran, on its answer (`result.routing`). */
export interface WorkerRouting {
  readonly target: 'worker';
  readonly reroutedFrom: typeof REROUTED_FROM;
  /** The worker host's node id. */
  readonly workerId: string;
  /** The needs that sent it there (the workbench's `unmetNeeds`). */
  readonly needs: readonly UnmetNeed[];
  /** The standing scope the call ran under. */
  readonly scope: Scope;
  /** The routing record (`GET /v1/worker-invocations/:id`). */
  readonly invocationId: string;
}

/** A consent request as a caller sees it: never command text or file contents. */
export interface ConsentCard {
  readonly id: string;
  readonly workerId: string;
  readonly runId: string;
  readonly action: string;
  readonly needs: readonly UnmetNeed[];
  /** The rung approving must grant for the call to run. */
  readonly requiredScope: Scope;
  /** The worker's standing scope when the request was made. */
  readonly heldScope: Scope;
  /** One line for the user: the action and what it needs, nothing it carries. */
  readonly summary: string;
  readonly status: ConsentStatus;
}

/** A consent request's lifecycle: `pending` until the user approves or denies it. */
export type ConsentStatus = 'pending' | 'approved' | 'denied';

/** One worker in a `worker_unavailable` answer, and what it lacks for the call. */
export interface WorkerLack {
  readonly workerId: string;
  readonly connected: boolean;
  /** Routing labels of the call the worker does not offer (a need, or `os:<goos>`). */
  readonly missing: readonly string[];
}
