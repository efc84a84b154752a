/**
 * A worker host's capacity: at most `capacity` calls run at once; the rest wait, in
 * arrival order, and a call cancelled while waiting leaves the line without running.
 * The counts feed the worker's Health frames.
 *
 * @module
 */

/** Thrown by {@link CallSlots.acquire} when the call's signal aborts while it waits. */
export class SlotWaitAborted extends Error {
  constructor() {
    super('the call was cancelled while it waited for a slot');
    this.name = 'SlotWaitAborted';
  }
}

interface Waiter {
  readonly grant: () => void;
}

/** A counting semaphore with a visible queue. */
export class CallSlots {
  private active = 0;
  private readonly waiting: Waiter[] = [];

  /** @param capacity - calls run at once; at least 1. */
  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new RangeError(`capacity must be a positive integer, not ${capacity}`);
    }
  }

  /** Calls running now. */
  get running(): number {
    return this.active;
  }

  /** Calls waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Waits for a slot and returns its release (idempotent). Rejects with
   * {@link SlotWaitAborted} when `signal` aborts first.
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new SlotWaitAborted());
    if (this.active < this.capacity && this.waiting.length === 0) {
      this.active += 1;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          this.active += 1;
          resolve(this.releaser());
        },
      };
      const onAbort = () => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(new SlotWaitAborted());
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active -= 1;
      this.waiting.shift()?.grant();
    };
  }
}
