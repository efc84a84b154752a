/**
 * One round of stale recovery, I/O at its edges: one statement reads the running
 * commands that look stale with what their workers and the database's continuity look
 * like; the pure rule (`recovery-rule.ts`) decides each; two compare-and-set
 * statements end the lost ones and queue again those that never began.
 *
 * @module
 */

import {
  type Command,
  type Db,
  endLostCommands,
  type HeldCommand,
  readStaleCandidates,
  requeueCommands,
} from '../store/index.js';
import type { CommandTelemetry } from './command-telemetry.js';
import type { CommandWaiters } from './command-waiters.js';
import { decideRecovery, type LivenessRule, type RecoveryVerdict } from './recovery-rule.js';

/** What a round needs. */
export interface StaleRecoveryDeps {
  db: Db;
  /** The recovering worker: its own commands are never candidates. */
  leaseOwner: string;
  rule: LivenessRule;
  leaseMs: number;
  telemetry: CommandTelemetry;
  /** Callers waiting on this node for a command's end. */
  waiters: CommandWaiters;
  /** Hands a telemetry promise to the queue, which waits for it on stop. */
  track(p: Promise<unknown>): void;
}

/** What one round did. */
export interface RecoveryRound {
  /** Commands ended `failed` / `command_lost`. */
  lost: Command[];
  /** Commands that never began, back in the queue (or `cancelled`, when a cancel was asked). */
  requeued: Command[];
  /** Candidates left running, and why. */
  kept: { id: string; why: Extract<RecoveryVerdict, { act: 'keep' }>['why'] }[];
}

/**
 * Runs one round as of `now` (the node's clock, for lease expiry): each move is
 * logged, and callers waiting here for a command that ended are told.
 */
export async function recoverStaleRound(
  deps: StaleRecoveryDeps,
  now: Date,
): Promise<RecoveryRound> {
  const candidates = await readStaleCandidates(deps.db, now, {
    livenessMs: deps.rule.livenessMs,
    exceptOwner: deps.leaseOwner,
  });
  const lost: HeldCommand[] = [];
  const requeue: HeldCommand[] = [];
  const kept: RecoveryRound['kept'] = [];
  for (const c of candidates) {
    const verdict = decideRecovery(c, deps.rule, deps.leaseMs);
    const held = { id: c.id, leaseOwner: c.leaseOwner };
    if (verdict.act === 'lost') lost.push(held);
    else if (verdict.act === 'requeue') requeue.push(held);
    else kept.push({ id: c.id, why: verdict.why });
  }
  const round = {
    lost: await endLostCommands(deps.db, lost),
    requeued: await requeueCommands(deps.db, requeue),
    kept,
  };
  for (const row of round.lost) {
    deps.track(deps.telemetry.moved('workspace_command.recovered_stale', row));
    deps.waiters.settle(row);
  }
  for (const row of round.requeued) {
    if (row.status === 'queued') {
      deps.telemetry.note('workspace_command.requeued', row);
    } else {
      // A cancel was asked for while it was claimed: it ended cancelled instead.
      deps.track(deps.telemetry.moved('workspace_command.cancelled', row));
      deps.waiters.settle(row);
    }
  }
  return round;
}
