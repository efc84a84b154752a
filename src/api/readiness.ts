/**
 * Readiness (`GET /readyz`): whether this node can serve `/v1` calls right now, as
 * opposed to liveness (`GET /healthz`: the process is up and answering).
 *
 * A node is ready when both checks pass:
 *
 * - `database`: a `select 1` answers within {@link READINESS_TIMEOUT_MS}. Every `/v1`
 *   route reads or writes rows, so without the database nothing can be served.
 * - `workbench`: somewhere to run calls. In local mode, the in-process workbench's
 *   command worker is running. In remote mode, at least one workbench peer is healthy;
 *   with `MEMQL_WORKBENCH_LOCAL_FALLBACK=1` calls run in-process when none is, so
 *   no healthy peer is reported but does not make the node unready.
 *
 * The answer names what was found, never addresses, URLs or driver messages: the
 * route needs no token. The driver's error goes to the node log, once per change.
 *
 * @module
 */

import type { Queryable } from '../store/index.js';
import { StoreError } from '../store/index.js';
import type { Logger } from '../telemetry/index.js';
import type { FleetSource, ReplicaFleet } from './fleet.js';

/** How long a readiness probe waits for the database (and the fleet), ms. */
export const READINESS_TIMEOUT_MS = 2_000;

/** One check of a readiness answer. */
export interface ReadinessCheck {
  /** Whether this check lets the node serve. */
  readonly ok: boolean;
  /** What was found, in words; on failure, also what to look at. */
  readonly detail: string;
}

/** The `/readyz` answer: 200 when `ready`, 503 otherwise. */
export interface Readiness {
  readonly ready: boolean;
  readonly checks: {
    readonly database: ReadinessCheck;
    readonly workbench: ReadinessCheck;
  };
}

/** What a database probe found; `error` is for the node log only. */
export type DatabaseProbe = { ok: true } | { ok: false; reason: string; error?: unknown };

/** What a fleet read found: the view, or why it could not be read. */
export type FleetProbe = { ok: true; view: ReplicaFleet } | { ok: false; reason: string };

/** The inputs of {@link decideReadiness}. */
export interface ReadinessInput {
  readonly database: DatabaseProbe;
  readonly fleet: FleetProbe;
  /** Remote mode only: calls with no healthy peer run in-process (`MEMQL_WORKBENCH_LOCAL_FALLBACK`). */
  readonly localFallback: boolean;
}

function workbenchCheck(fleet: FleetProbe, localFallback: boolean): ReadinessCheck {
  if (!fleet.ok) {
    return { ok: false, detail: `the workbench fleet could not be read: ${fleet.reason}` };
  }
  const { mode, replicas } = fleet.view;
  const healthy = replicas.filter((r) => r.healthy).length;
  if (mode === 'local') {
    return healthy > 0
      ? { ok: true, detail: 'the in-process workbench is running' }
      : {
          ok: false,
          detail: 'the in-process workbench is not running (starting or stopping)',
        };
  }
  if (healthy > 0) {
    return { ok: true, detail: `${healthy} of ${replicas.length} workbench peers healthy` };
  }
  const none = `no healthy workbench peer (0 of ${replicas.length} known)`;
  return localFallback
    ? {
        ok: true,
        detail: `${none}; calls run on the in-process workbench (MEMQL_WORKBENCH_LOCAL_FALLBACK=1)`,
      }
    : {
        ok: false,
        detail: `${none}; calls are refused with no_workbench_peer until one connects; check the workbench replicas and MEMQL_WORKER_PEERS`,
      };
}

/** The readiness answer from what the probes found. Pure. */
export function decideReadiness(input: ReadinessInput): Readiness {
  const database: ReadinessCheck = input.database.ok
    ? { ok: true, detail: 'select 1 answered' }
    : {
        ok: false,
        detail: `${input.database.reason}; check that the database is up and reachable from this node`,
      };
  const workbench = workbenchCheck(input.fleet, input.localFallback);
  return { ready: database.ok && workbench.ok, checks: { database, workbench } };
}

/** A failure of the probe's own, named by code only: driver messages stay in the log. */
function describeDbError(err: unknown): string {
  if (err instanceof StoreError) {
    const cause = (err.cause as { code?: unknown } | undefined)?.code;
    const code = typeof cause === 'string' && cause !== '' ? cause : (err.sqlState ?? err.code);
    return err.code === 'unavailable'
      ? `database unreachable (${code})`
      : `database failing (${code})`;
  }
  return 'database failing (internal)';
}

const TIMED_OUT = Symbol('timed out');

/** `work`, or {@link TIMED_OUT} after `ms`; a late rejection of `work` is swallowed. */
async function within<T>(work: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  work.catch(() => {});
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `select 1`, giving up after `timeoutMs`. Never throws. */
export async function probeDatabase(db: Queryable, timeoutMs: number): Promise<DatabaseProbe> {
  try {
    const answer = await within(db.query('select 1 as one'), timeoutMs);
    if (answer === TIMED_OUT) {
      return { ok: false, reason: `database did not answer select 1 within ${timeoutMs} ms` };
    }
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: describeDbError(err), error: err };
  }
}

/** Reads the fleet, giving up after `timeoutMs`. Never throws. */
export async function probeFleet(fleet: FleetSource, timeoutMs: number): Promise<FleetProbe> {
  try {
    const view = await within(fleet(), timeoutMs);
    if (view === TIMED_OUT) return { ok: false, reason: `no answer within ${timeoutMs} ms` };
    return { ok: true, view };
  } catch (err) {
    // The local fleet counts queued commands in the database.
    return { ok: false, reason: describeDbError(err) };
  }
}

/** What {@link createReadinessProbe} reads. */
export interface ReadinessDeps {
  readonly db: Queryable;
  readonly fleet: FleetSource;
  /** See {@link ReadinessInput.localFallback}. Default false. */
  readonly localFallback?: boolean;
  /** Default {@link READINESS_TIMEOUT_MS}. */
  readonly timeoutMs?: number;
  readonly log: Logger;
}

/**
 * A readiness probe for one server. Probes that arrive while one is running share
 * its answer, so a slow database never piles up `select 1`s. Each change of the
 * answer is logged once (not ready at WARN, with the driver's error).
 */
export function createReadinessProbe(deps: ReadinessDeps): () => Promise<Readiness> {
  const timeoutMs = deps.timeoutMs ?? READINESS_TIMEOUT_MS;
  let running: Promise<Readiness> | null = null;
  let last: boolean | null = null;
  const probe = async (): Promise<Readiness> => {
    const [database, fleet] = await Promise.all([
      probeDatabase(deps.db, timeoutMs),
      probeFleet(deps.fleet, timeoutMs),
    ]);
    const readiness = decideReadiness({
      database,
      fleet,
      localFallback: deps.localFallback ?? false,
    });
    if (readiness.ready !== last) {
      last = readiness.ready;
      if (readiness.ready) deps.log.info({ checks: readiness.checks }, 'ready for calls');
      else {
        const err = database.ok ? undefined : database.error;
        deps.log.warn({ checks: readiness.checks, err }, 'not ready for calls');
      }
    }
    return readiness;
  };
  return () => {
    running ??= probe().finally(() => {
      running = null;
    });
    return running;
  };
}
