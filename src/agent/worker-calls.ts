/**
 * The calls this agent node has on its way to, or running on, its users' worker hosts,
 * so that a kill switch turned on stops them: the reroute takes a ticket for a call
 * before it reads the user's consent, and a kill switch turned on after that read
 * (announced by the route that set it, on this node or through the store's notice
 * from another) marks every ticket of that user it covers. A ticket whose worker is
 * chosen is aborted at once (the abort sends the worker a Cancel, and the worker kills
 * the command's process group); one still deciding is aborted when its worker is
 * chosen, before anything is sent.
 *
 * Taking the ticket before the read is what closes the race: a switch committed
 * before the read is seen by the gate, and one committed after it is announced after
 * the ticket exists. A stopped call answers `kill_switch_engaged` ({@link killSwitchResult}),
 * unless the worker's answer shows it had finished first ({@link cutShort}).
 *
 * @module
 */

import {
  type DispatchFailure,
  type DispatchResult,
  errorResult,
  REROUTED_FROM,
  type UnmetNeed,
} from '../contract/index.js';

/** Stops the calls a kill switch covers (the API's hook into the agent). */
export interface WorkerCallStopper {
  /**
   * Stops `userId`'s calls on worker `workerId`, or on every worker with null.
   * Returns how many running calls it stopped; calls not yet sent are stopped when
   * their worker is chosen. Idempotent.
   */
  stopForKillSwitch(userId: string, workerId: string | null): number;
}

/** One call's ticket (see the module comment). */
export class WorkerCallTicket {
  private readonly controller = new AbortController();
  /** The chosen worker; null while the gate decides. */
  private workerId: string | null = null;
  private allStopped = false;
  private readonly stoppedWorkers = new Set<string>();

  constructor(
    readonly userId: string,
    private readonly release: (ticket: WorkerCallTicket) => void,
  ) {}

  /** Aborts when a kill switch stops this call. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Whether a kill switch stopped it. */
  get stopped(): boolean {
    return this.controller.signal.aborted;
  }

  /** Names the worker the call goes to; it is stopped now if a switch already covers it. */
  assign(workerId: string): void {
    this.workerId = workerId;
    if (this.allStopped || this.stoppedWorkers.has(workerId)) this.controller.abort();
  }

  /** A switch over `workerId` (null: every worker) was turned on; true when this aborted a call on its way. */
  stop(workerId: string | null): boolean {
    if (workerId === null) this.allStopped = true;
    else this.stoppedWorkers.add(workerId);
    if (this.workerId === null || this.stopped) return false;
    if (workerId !== null && workerId !== this.workerId) return false;
    this.controller.abort();
    return true;
  }

  /** The call has its answer: no switch concerns it any more. */
  end(): void {
    this.release(this);
  }
}

/** The tickets of this node's calls to worker hosts. */
export class WorkerCalls implements WorkerCallStopper {
  private readonly byUser = new Map<string, Set<WorkerCallTicket>>();

  /** A ticket for a call of `userId`'s; end it when the call has its answer. */
  begin(userId: string): WorkerCallTicket {
    const ticket = new WorkerCallTicket(userId, (done) => {
      const tickets = this.byUser.get(done.userId);
      tickets?.delete(done);
      if (tickets?.size === 0) this.byUser.delete(done.userId);
    });
    let tickets = this.byUser.get(userId);
    if (!tickets) {
      tickets = new Set();
      this.byUser.set(userId, tickets);
    }
    tickets.add(ticket);
    return ticket;
  }

  stopForKillSwitch(userId: string, workerId: string | null): number {
    let stopped = 0;
    for (const ticket of this.byUser.get(userId) ?? []) {
      if (ticket.stop(workerId)) stopped += 1;
    }
    return stopped;
  }

  /** The users with calls in flight (whose switches a catch-up reads). */
  users(): string[] {
    return [...this.byUser.keys()];
  }
}

/**
 * A signal that aborts when either does (the caller's, and the kill switch's), with
 * the reason of the one that did: a caller that only went away (`CallerGoneError`)
 * leaves the call running on the worker, as the stream caller reads that reason, and
 * its outcome is still recorded; a cancel or the kill switch stops it.
 */
export function eitherSignal(a: AbortSignal | undefined, b: AbortSignal): AbortSignal {
  if (a === undefined) return b;
  const both = new AbortController();
  const abort = (from: AbortSignal) => () => both.abort(from.reason);
  if (b.aborted) abort(b)();
  else if (a.aborted) abort(a)();
  a.addEventListener('abort', abort(a), { once: true });
  b.addEventListener('abort', abort(b), { once: true });
  return both.signal;
}

/**
 * Whether a worker's answer shows the call was cut short by the cancel a kill switch
 * sent (an `exec` that ended `cancelled`, or a call cancelled while it waited for a
 * slot), rather than finished before the cancel arrived: a finished call keeps its
 * true answer.
 */
export function cutShort(action: string, result: DispatchResult): boolean {
  if (!result.ok) return result.errorCode === 'unavailable';
  if (action !== 'exec') return false;
  return (result.payload as { cancelled?: unknown } | undefined)?.cancelled === true;
}

/**
 * The `kill_switch_engaged` answer: of a call refused before it was sent (`stopped`
 * null), or of one stopped while it ran on the worker, carrying what the worker
 * answered (an exec's output up to the kill).
 */
export function killSwitchResult(
  workerIds: readonly string[],
  needs: readonly UnmetNeed[],
  stopped: DispatchResult | null,
): DispatchFailure {
  const base = { reroutedFrom: REROUTED_FROM, unmetNeeds: needs, workerIds };
  if (stopped === null) {
    return errorResult(
      'kill_switch_engaged',
      `kill_switch_engaged: the user turned computer use off for worker "${workerIds.join(', ')}" while this call was on its way; nothing ran. Only the user can turn it back on, in the console: tell them what the work needs rather than retrying.`,
      base,
    );
  }
  return errorResult(
    'kill_switch_engaged',
    `kill_switch_engaged: the user turned computer use off while this call ran on worker "${workerIds.join(', ')}"; it was stopped before it finished and its processes were killed (what it changed until then stays changed). Only the user can turn it back on, in the console: tell them what the work needs rather than retrying.`,
    { ...base, stopped: true, ...(stopped.ok ? { answer: stopped.payload } : {}) },
  );
}
