/**
 * When a running command is lost with its worker: a pure decision over what one
 * statement read (`store/command-recovery.ts`), and the settings it derives from.
 *
 * A worker heartbeats every fifth of the liveness window `L` (`MEMQL_NODE_LIVENESS_MS`),
 * and each beat also beats the database's continuity row (`store/db-continuity.ts`).
 * An old heartbeat means the worker died only if the database could have taken its
 * beats meanwhile: after a pause or an outage of the database every heartbeat is old
 * at once. So a worker's commands are given up when
 *
 * - its worker stopped (it said so), or has no row: nobody can finish them; or
 * - its heartbeat is older than `L` AND the database has been beaten without a gap of
 *   more than two heartbeat intervals for at least `L` plus a reconnect slack (a live
 *   worker's driver reconnects within 2 s, see `store/postgres-driver.ts`), and was
 *   beaten within that gap; or
 * - its lease expired AND the database has been steady that way for a whole lease plus
 *   the slack (its worker, live or not, had three renewals' time and renewed none).
 *
 * The continuity is shared by every node, so a node that started a second ago judges
 * as well as one up for a day: the killed replica's commands reach a terminal row
 * within one liveness window plus one recovery period ({@link recoveryBoundMs}) of its
 * last heartbeat, however young the survivors are. A node never recovers its own
 * commands: the worker that runs a command records its outcome, through any outage.
 * A command given up that never began (its worker was lost before it started it) is
 * queued again instead of recorded as lost: it never ran.
 *
 * @module
 */

import type { GoneEvidence, StaleCandidate } from '../store/index.js';

/** How long a live worker's driver may take to reconnect after an outage, ms. */
export const RECONNECT_SLACK_MS = 2_000;

/** Everything the rule derives from the node's settings. */
export interface LivenessRule {
  /** `MEMQL_NODE_LIVENESS_MS`. */
  livenessMs: number;
  /** Worker heartbeat period: a fifth of the window, at least 50 ms. */
  heartbeatMs: number;
  /** The longest silence between two beats that still counts as continuous: two heartbeats. */
  gapMs: number;
  /** {@link RECONNECT_SLACK_MS}. */
  slackMs: number;
  /** What an old heartbeat needs behind it: the window plus the slack. */
  evidence: GoneEvidence;
}

/** The rule of a node whose liveness window is `livenessMs`. */
export function livenessRule(livenessMs: number): LivenessRule {
  const heartbeatMs = Math.max(50, Math.floor(livenessMs / 5));
  const gapMs = 2 * heartbeatMs;
  return {
    livenessMs,
    heartbeatMs,
    gapMs,
    slackMs: RECONNECT_SLACK_MS,
    evidence: { steadyMs: livenessMs + RECONNECT_SLACK_MS, gapMs },
  };
}

/** Default period of stale recovery: half of `min(leaseMs, livenessMs)`, at least 50 ms. */
export function recoveryPeriodMs(leaseMs: number, livenessMs: number): number {
  return Math.max(50, Math.floor(Math.min(leaseMs, livenessMs) / 2));
}

/**
 * How long after a worker's last heartbeat its running commands reach a terminal row
 * at most, while another worker runs and the database is steady: one liveness window
 * plus one recovery period (plus the time of the statements themselves).
 */
export function recoveryBoundMs(livenessMs: number, periodMs: number): number {
  return livenessMs + periodMs;
}

/** Why a command is given up. */
export type LostEvidence = 'no_worker' | 'worker_stopped' | 'worker_silent' | 'lease_lapsed';

/** What recovery does with one candidate. */
export type RecoveryVerdict =
  | { act: 'keep'; why: 'worker_live' | 'database_not_steady' }
  /** `lost`: it began, so it may have run; it ends `failed` / `command_lost`. */
  | { act: 'lost'; evidence: LostEvidence }
  /** `requeue`: it never began; it goes back to the queue. */
  | { act: 'requeue'; evidence: LostEvidence };

/** The facts of one candidate the rule looks at. */
export type RecoveryFacts = Pick<
  StaleCandidate,
  'began' | 'leaseOverdueMs' | 'worker' | 'database'
>;

/** Whether the database has been beaten without a gap for `needMs`, as of the read. */
function steadyFor(facts: RecoveryFacts, rule: LivenessRule, needMs: number): boolean {
  const db = facts.database;
  return db !== null && db.lastBeatAgeMs <= rule.gapMs && db.steadyMs >= needMs;
}

/** Decides one candidate (see the module comment). Pure. */
export function decideRecovery(
  facts: RecoveryFacts,
  rule: LivenessRule,
  leaseMs: number,
): RecoveryVerdict {
  const give = (evidence: LostEvidence): RecoveryVerdict =>
    facts.began ? { act: 'lost', evidence } : { act: 'requeue', evidence };
  const worker = facts.worker;
  if (worker === null) return give('no_worker');
  if (worker.status === 'stopped') return give('worker_stopped');
  if (worker.heartbeatAgeMs > rule.livenessMs) {
    return steadyFor(facts, rule, rule.evidence.steadyMs)
      ? give('worker_silent')
      : { act: 'keep', why: 'database_not_steady' };
  }
  if (facts.leaseOverdueMs > 0) {
    return steadyFor(facts, rule, leaseMs + rule.slackMs)
      ? give('lease_lapsed')
      : { act: 'keep', why: 'database_not_steady' };
  }
  return { act: 'keep', why: 'worker_live' };
}
