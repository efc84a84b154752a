/**
 * How work reaches an idle worker: a wake-up from this process (an enqueue here, a
 * slot freed, a drain or stop), a notice of a command queued on another node
 * (Postgres `LISTEN`), or its poll period passing, which stays the backstop.
 *
 * @module
 */

import type { Db, Subscription } from '../store/index.js';
import { listenForQueuedCommands, type QueuedNotice } from '../store/index.js';
import { within } from './within.js';

/**
 * How long a stop waits for the listen to end, ms: with the database unreachable the
 * unlisten would wait for a connection; it then ends on its own, later.
 */
const CLOSE_WAIT_MS = 1000;

/** Who a worker is, to tell which notices are its to act on. */
export interface ListenOptions {
  db: Db;
  /** The worker's lease owner: its own enqueues woke it already. */
  leaseOwner: string;
  /** The worker's node: a run another live node holds is that node's to claim. */
  nodeId: string;
  /** The listen could not start; polling carries on alone. */
  onError(err: unknown): void;
}

/**
 * Whether a notice of a command queued elsewhere is worth a claim: not when this
 * worker queued it (it woke itself), nor when another node held the run's workspace
 * (that node's workers claim it while it lives; if it died, polling finds the command).
 */
export function noticeWakes(
  notice: QueuedNotice,
  self: { leaseOwner: string; nodeId: string },
): boolean {
  return (
    notice.sender !== self.leaseOwner && (notice.holder === null || notice.holder === self.nodeId)
  );
}

/**
 * The wake-ups of one loop that sleeps between passes: a wake-up ends its sleep, or,
 * when it comes during a pass, the next sleep at once, so none is lost.
 */
export class WakeUps {
  private requested = false;
  private wakeUp: (() => void) | null = null;
  private listening: Promise<Subscription | null> = Promise.resolve(null);

  /** Ends the idle now, or the next one at once if the loop is busy. */
  wake(): void {
    this.requested = true;
    this.wakeUp?.();
  }

  /** Forgets the wake-ups so far: the loop is about to make a pass. */
  clear(): void {
    this.requested = false;
  }

  /** Sleeps until woken or `ms` passes; at once when woken since {@link clear}. */
  idle(ms: number): Promise<void> {
    if (this.requested) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      // An idle loop does not keep the process alive: the node's servers do that.
      const timer = setTimeout(done, ms);
      timer.unref();
      this.wakeUp = done;
    });
  }

  /**
   * Wakes the worker for commands queued on other nodes that it may claim, when the
   * driver can listen (Postgres); a reconnected listener wakes it too, to catch up on
   * notices lost meanwhile. Without a listener polling finds those commands.
   */
  listen(options: ListenOptions): void {
    const listening = listenForQueuedCommands(
      options.db,
      (notice) => {
        if (noticeWakes(notice, options)) this.wake();
      },
      () => this.wake(),
    );
    this.listening = (listening ?? Promise.resolve(null)).catch((err: unknown) => {
      options.onError(err);
      return null;
    });
  }

  /** Stops listening, now or as soon as a listen still starting has started. */
  async close(): Promise<void> {
    const closing = this.listening.then((sub) => sub?.close()).catch(() => undefined);
    await within(closing, CLOSE_WAIT_MS);
  }
}
