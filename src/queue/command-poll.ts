/**
 * The polled side of waiting: the rows of every command a caller on this node waits
 * for, read together in one statement per poll period, however many callers wait.
 * Polling covers ends this node does not see itself (another node ran, cancelled or
 * recovered the command); ends made here reach waiters at once (`command-waiters.ts`).
 *
 * @module
 */

import type { Command } from '../store/index.js';

/** Options of {@link CommandPoll}. */
export interface CommandPollOptions {
  /** Reads the rows of `ids` (`getCommands`); an id without a row is absent. */
  read(ids: readonly string[]): Promise<Command[]>;
  /** Period between two reads, ms. */
  periodMs: number;
  /** True for a command whose end this node will hear of itself (it runs it): not read. */
  skip(id: string): boolean;
}

/** Follows command rows by polling while anyone follows one. */
export class CommandPoll {
  private readonly followers = new Map<string, Set<(row: Command | null) => void>>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(private readonly options: CommandPollOptions) {}

  /**
   * Calls `onRow` after each poll that read the command: with its row, or null when it
   * has none. The first poll comes within one period. Returns an unsubscribe.
   */
  follow(id: string, onRow: (row: Command | null) => void): () => void {
    let set = this.followers.get(id);
    if (!set) {
      set = new Set();
      this.followers.set(id, set);
    }
    set.add(onRow);
    this.schedule();
    return () => {
      set.delete(onRow);
      if (set.size === 0 && this.followers.get(id) === set) this.followers.delete(id);
      if (this.followers.size === 0) {
        clearTimeout(this.timer);
        this.timer = undefined;
      }
    };
  }

  private schedule(): void {
    if (this.timer !== undefined || this.polling || this.followers.size === 0) return;
    this.timer = setTimeout(() => void this.poll(), this.options.periodMs);
  }

  private async poll(): Promise<void> {
    this.timer = undefined;
    this.polling = true;
    const ids = [...this.followers.keys()].filter((id) => !this.options.skip(id));
    try {
      if (ids.length > 0) {
        const rows = new Map((await this.options.read(ids)).map((r) => [r.id, r]));
        for (const id of ids) {
          for (const fn of [...(this.followers.get(id) ?? [])]) fn(rows.get(id) ?? null);
        }
      }
    } catch {
      // The database is unreachable for now; the next poll tries again.
    } finally {
      this.polling = false;
      this.schedule();
    }
  }
}
