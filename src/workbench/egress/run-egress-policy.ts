/**
 * The network policy a run's commands have now, as the egress proxy asks for it: read
 * from the run's row when a command starts ({@link RunEgressPolicies.read}) and, for each
 * new proxy connection, from a short cache ({@link RunEgressPolicies.current}), so a
 * change applies to the next connection of a running sandbox without a restart.
 *
 * What the row holds is narrowed by this node's own bounds (`MEMQL_EGRESS_CEILING`,
 * the secrets `MEMQL_EGRESS_SECRETS` defines): an operator who lowers the ceiling
 * lowers every run's policy with it. A run that ended, was deleted or does not exist
 * reaches nothing.
 *
 * How fresh `current` is:
 * - a change through this node's API is seen by the next call (the API calls
 *   {@link RunEgressPolicies.changed});
 * - a change through another node is seen once its notice arrives (Postgres `NOTIFY`,
 *   {@link RunEgressPolicies.listen}), and at the latest `maxAgeMs` plus one read later,
 *   the cache's age bound, which also covers a notice lost while the listening
 *   connection was down;
 * - when reads fail (the database is away), a cached policy older than `maxStaleMs` is
 *   dropped for no network: staleness is bounded, never open-ended.
 *
 * Usage, with the proxy's `openRun(runId, policy)`:
 *
 * ```ts
 * const policies = new RunEgressPolicies({ db, bounds: config.egress, log });
 * await policies.listen();
 * await policies.read(runId);                       // when the command starts
 * const endpoint = await proxy.openRun(runId, policies.policyOf(runId));
 * ```
 *
 * @module
 */

import {
  type EgressBounds,
  type EgressPolicy,
  effectivePolicy,
  NO_EGRESS,
} from '../../contract/index.js';
import {
  type Db,
  getRunNetwork,
  listenForRunNetwork,
  type Subscription,
} from '../../store/index.js';
import type { Logger } from '../../telemetry/index.js';

/** Options of {@link RunEgressPolicies}. */
export interface RunEgressPoliciesOptions {
  readonly db: Db;
  /** This node's `MEMQL_EGRESS_CEILING` and secret names. */
  readonly bounds: EgressBounds;
  /** Age after which `current` reads the row again, in the background. Default 2000 ms. */
  readonly maxAgeMs?: number;
  /**
   * Age after which a policy that could not be read again is dropped for no network.
   * Default 30000 ms; at least `maxAgeMs`.
   */
  readonly maxStaleMs?: number;
  /** Most runs kept; the least recently read go first. Default 10000. */
  readonly maxRuns?: number;
  /** Milliseconds on a monotonic clock; default `performance.now`. */
  readonly now?: () => number;
  readonly log: Logger;
}

/** The policy of `runId` now, read from its row and narrowed by `bounds`. */
export async function readRunEgressPolicy(
  db: Db,
  runId: string,
  bounds: EgressBounds,
): Promise<EgressPolicy> {
  const stored = await getRunNetwork(db, runId);
  return stored === null ? NO_EGRESS : effectivePolicy(stored, bounds);
}

interface Entry {
  readonly runId: string;
  policy: EgressPolicy;
  /** When `policy` was read or told, on the clock. */
  at: number;
  /** Bumped by every change told or announced: a read begun before one is not kept. */
  generation: number;
  reading: Promise<EgressPolicy> | null;
}

/** The runs' policies, cached; see the module comment for how fresh they are. */
export class RunEgressPolicies {
  readonly #db: Db;
  readonly #bounds: EgressBounds;
  readonly #maxAgeMs: number;
  readonly #maxStaleMs: number;
  readonly #maxRuns: number;
  readonly #now: () => number;
  readonly #log: Logger;
  readonly #entries = new Map<string, Entry>();
  #subscription: Subscription | null = null;

  constructor(options: RunEgressPoliciesOptions) {
    this.#db = options.db;
    this.#bounds = options.bounds;
    this.#maxAgeMs = options.maxAgeMs ?? 2_000;
    this.#maxStaleMs = Math.max(options.maxStaleMs ?? 30_000, this.#maxAgeMs);
    this.#maxRuns = options.maxRuns ?? 10_000;
    this.#now = options.now ?? (() => performance.now());
    this.#log = options.log;
  }

  /**
   * Reads the run's policy from its row now (when a command starts) and keeps it.
   * Rejects when the row cannot be read: the caller runs the command without network
   * or refuses it, its choice.
   */
  read(runId: string): Promise<EgressPolicy> {
    return this.#load(this.#entry(runId));
  }

  /**
   * The run's policy for one new connection, synchronously: the cached one, read again
   * in the background once older than `maxAgeMs`; no network for a run never read, or
   * whose policy is older than `maxStaleMs` (reads failing meanwhile).
   */
  current(runId: string): EgressPolicy {
    const entry = this.#entries.get(runId);
    if (entry === undefined) {
      void this.#load(this.#entry(runId)).catch(() => {});
      return NO_EGRESS;
    }
    this.#touch(runId, entry);
    const age = this.#now() - entry.at;
    if (age >= this.#maxAgeMs) void this.#load(entry).catch(() => {});
    return age >= this.#maxStaleMs ? NO_EGRESS : entry.policy;
  }

  /** `() => current(runId)`: what the proxy's `openRun` takes. */
  policyOf(runId: string): () => EgressPolicy {
    return () => this.current(runId);
  }

  /**
   * A change this node made (its API): `policy` is in force from the next call on. Without
   * one, the row is read again (a change announced by another node).
   */
  changed(runId: string, policy?: EgressPolicy): void {
    const entry = this.#entries.get(runId);
    if (entry === undefined && policy === undefined) return; // nothing cached to correct
    const target = entry ?? this.#entry(runId);
    target.generation += 1;
    if (policy !== undefined) {
      target.policy = policy;
      target.at = this.#now();
    } else {
      target.reading = null;
      void this.#load(target).catch(() => {});
    }
  }

  /** Lets go of a run (its sandbox ended). */
  forget(runId: string): void {
    this.#entries.delete(runId);
  }

  /**
   * Hears the changes other nodes make (Postgres; PGlite is one process, whose API
   * tells {@link changed} itself). A (re)established connection may have missed
   * notices, so every cached policy is read again then.
   */
  async listen(): Promise<void> {
    if (this.#subscription !== null) return;
    const listening = listenForRunNetwork(
      this.#db,
      (runId) => this.changed(runId),
      () => {
        for (const runId of this.#entries.keys()) this.changed(runId);
      },
    );
    if (listening !== null) this.#subscription = await listening;
  }

  /** Stops listening and forgets every run. */
  async close(): Promise<void> {
    const subscription = this.#subscription;
    this.#subscription = null;
    this.#entries.clear();
    await subscription?.close();
  }

  #entry(runId: string): Entry {
    let entry = this.#entries.get(runId);
    if (entry === undefined) {
      // Never read: as old as can be, so the first answer is no network until it is.
      entry = {
        runId,
        policy: NO_EGRESS,
        at: Number.NEGATIVE_INFINITY,
        generation: 0,
        reading: null,
      };
      this.#entries.set(runId, entry);
      if (this.#entries.size > this.#maxRuns) {
        const oldest = this.#entries.keys().next().value;
        if (oldest !== undefined) this.#entries.delete(oldest);
      }
    }
    return entry;
  }

  /** Moves a run to the end of the eviction order. */
  #touch(runId: string, entry: Entry): void {
    this.#entries.delete(runId);
    this.#entries.set(runId, entry);
  }

  /** One read of the row at a time per run; kept only if no change came meanwhile. */
  #load(entry: Entry): Promise<EgressPolicy> {
    if (entry.reading !== null) return entry.reading;
    const { generation, runId } = entry;
    const reading = readRunEgressPolicy(this.#db, runId, this.#bounds).then(
      (policy) => {
        if (entry.reading === reading) entry.reading = null;
        if (entry.generation === generation) {
          entry.policy = policy;
          entry.at = this.#now();
          return policy;
        }
        return entry.policy;
      },
      (err: unknown) => {
        if (entry.reading === reading) entry.reading = null;
        this.#log.warn({ err, runId }, 'reading a run network policy failed; keeping the last');
        throw err;
      },
    );
    entry.reading = reading;
    return reading;
  }
}
