/**
 * The notice that a user turned a kill switch on, so every agent node stops the calls
 * it has running on that user's worker hosts. Several agent replicas share one
 * Postgres, and the route that turned the switch on may be served by another replica
 * than the one a worker is connected to: the notice (Postgres `NOTIFY`, sent by the
 * transaction that set the switch, so it is heard only once the switch is committed)
 * reaches them all. PGlite is one process, where the route's own node stops its calls
 * without a notice.
 *
 * @module
 */

import type { Db, Queryable, Subscription } from './db.js';
import { ALL_WORKERS } from './worker-consent.js';

/** The channel (payload: a {@link KillSwitchNotice} as JSON). */
export const KILL_SWITCH_CHANNEL = 'memql_kill_switch_engaged';

/** A kill switch that was turned on. */
export interface KillSwitchNotice {
  readonly ownerUserId: string;
  /** The one worker it covers; null for the switch over every worker of the user. */
  readonly workerId: string | null;
}

/**
 * Notifies {@link KILL_SWITCH_CHANNEL} that `ownerUserId`'s kill switch over
 * `workerId` ({@link ALL_WORKERS} for every worker) is on. Call it in the transaction
 * that engaged it: Postgres delivers the notice at commit, never for a rollback.
 */
export async function announceKillSwitch(
  q: Queryable,
  ownerUserId: string,
  workerId: string,
): Promise<void> {
  const notice: KillSwitchNotice = {
    ownerUserId,
    workerId: workerId === ALL_WORKERS ? null : workerId,
  };
  await q.query('select pg_notify($1, $2)', [KILL_SWITCH_CHANNEL, JSON.stringify(notice)]);
}

/**
 * Calls `onEngaged` for every notice {@link announceKillSwitch} sent, from any node,
 * and `onListening` each time the listening connection is (re)established: what was
 * announced while it was down is lost, so the caller reads the switches then. Null
 * when the driver cannot listen (PGlite: one process, which stops its own calls).
 */
export function listenForKillSwitch(
  db: Db,
  onEngaged: (notice: KillSwitchNotice) => void,
  onListening?: () => void,
): Promise<Subscription> | null {
  if (!db.listen) return null;
  return db.listen(
    KILL_SWITCH_CHANNEL,
    (payload) => {
      const notice = parseNotice(payload);
      if (notice) onEngaged(notice);
    },
    onListening,
  );
}

function parseNotice(payload: string): KillSwitchNotice | null {
  try {
    const v = JSON.parse(payload) as { ownerUserId?: unknown; workerId?: unknown };
    if (typeof v.ownerUserId !== 'string') return null;
    return {
      ownerUserId: v.ownerUserId,
      workerId: typeof v.workerId === 'string' ? v.workerId : null,
    };
  } catch {
    return null;
  }
}
