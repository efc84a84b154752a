/**
 * The user's controls over worker hosts as JSON on the HTTP API: their workers, the
 * standing consent on each, consent requests and routing records. The API answers
 * with these and the client reads them; they are defined here once. Timestamps are ISO
 * 8601 strings, as JSON carries them.
 *
 * @module
 */

import type { UnmetNeed } from './needs.js';
import type { Scope } from './scope.js';
import type { ConsentCard } from './worker-consent.js';

/** One of the caller's worker hosts, as `GET /v1/workers` lists it. */
export interface WorkerView {
  readonly workerId: string;
  /**
   * Whether it is connected to the agent node that answered now. A worker connected
   * to another agent node of the same deployment reads `false` here.
   */
  readonly connected: boolean;
  /** Its OS, Go's spelling (`linux`, `darwin`, `windows`), as it last declared it. */
  readonly os: string;
  /** The needs it declared it provides (`display`, `gpu`, `macos_tooling`, `user_files`). */
  readonly provides: readonly string[];
  /** The `memql worker` version it last reported. */
  readonly version: string;
  /** When its current (or last) connection came up. */
  readonly connectedAt: string;
  /** When its last connection ended; null while connected, or when no end was recorded. */
  readonly disconnectedAt: string | null;
  /** Calls running on it through this agent node (0 while not connected here). */
  readonly inFlight: number;
  /** Calls it runs at once; null while not connected here (it declares it on connecting). */
  readonly capacity: number | null;
  /** The standing scope the user gave the agent on it (`none` until granted). */
  readonly scope: Scope;
  /** Its own kill switch (the user-wide one is beside the list). */
  readonly killSwitch: boolean;
}

/** `GET /v1/workers`. */
export interface WorkersAnswer {
  /** The user-wide kill switch: on, no call runs on any worker of the user's. */
  readonly killSwitch: boolean;
  readonly workers: readonly WorkerView[];
}

/** A user's standing consent on one worker. */
export interface WorkerConsentView {
  readonly workerId: string;
  readonly scope: Scope;
  readonly killSwitch: boolean;
  /** When it last changed; null when never set. */
  readonly updatedAt: string | null;
}

/** `PUT /v1/workers/:workerId/scope`. */
export interface SetScopeAnswer {
  readonly consent: WorkerConsentView;
  /** The scope it held before. */
  readonly previousScope: Scope;
}

/** `POST /v1/workers/kill-switch`. */
export interface KillSwitchAnswer {
  readonly killSwitch: {
    /** The worker it applies to; null for the user-wide switch. */
    readonly workerId: string | null;
    readonly engaged: boolean;
    readonly updatedAt: string | null;
  };
}

/** A consent request with its history. */
export interface ConsentRequestView extends ConsentCard {
  readonly createdAt: string;
  readonly decidedAt: string | null;
  /** The scope it was approved at; null while pending and when denied. */
  readonly decidedScope: Scope | null;
}

/** `POST /v1/consent-requests/:id/approve`. */
export interface ApproveAnswer {
  readonly request: ConsentRequestView;
  /** The worker's standing consent after approving (never lowered by an approval). */
  readonly consent: WorkerConsentView;
  /** Whether that standing scope covers the request's `requiredScope`: the call can run. */
  readonly covers: boolean;
  /** What approving did, in words; says so when the call still cannot run at that tier. */
  readonly message: string;
}

/** `POST /v1/consent-requests/:id/deny`. */
export interface DenyAnswer {
  readonly request: ConsentRequestView;
}

/** The routing record of a call sent to a worker host: why it ran there. */
export interface WorkerInvocationView {
  readonly id: string;
  readonly workerId: string;
  readonly runId: string;
  readonly action: string;
  readonly callId: string | null;
  /** Where the call would have run: `workbench`. */
  readonly reroutedFrom: string;
  /** The needs the workbench could not provide, which sent it to the worker. */
  readonly needs: readonly UnmetNeed[];
  /** The standing scope it ran under. */
  readonly scope: Scope;
  /** `running` until the worker answers; `lost` when its stream ended first. */
  readonly status: 'running' | 'succeeded' | 'failed' | 'lost';
  readonly errorCode: string | null;
  readonly startedAt: string;
  readonly finishedAt: string | null;
}
