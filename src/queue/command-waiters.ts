import type { OutputSink, OutputStream } from '../contract/index.js';
import { WorkbenchError } from '../contract/index.js';
import type { Command } from '../store/index.js';

/**
 * A command that ran but whose outcome this node cannot record yet (the database is
 * unreachable); the node keeps trying, and the caller may stop waiting.
 */
export interface PendingOutcome {
  commandId: string;
  /** The exit code the command ended with, when it ended with one. */
  exitCode: number | null;
  /** Why recording is stuck, for the message (no secrets: a summary of the failure). */
  reason: string;
}

function listeners<T>(map: Map<string, Set<T>>, id: string, fn: T): () => void {
  let set = map.get(id);
  if (!set) {
    set = new Set();
    map.set(id, set);
  }
  set.add(fn);
  return () => {
    set.delete(fn);
    if (set.size === 0 && map.get(id) === set) map.delete(id);
  };
}

/** How many ids of commands that ended here {@link CommandWaiters} remembers. */
const RECENT_ENDS = 1024;

/**
 * The in-process side of waiting: callers on this node register here and hear of a
 * command's end, and its live output, as soon as this node knows. Polling the row
 * covers commands that end elsewhere.
 */
export class CommandWaiters {
  private readonly terminal = new Map<string, Set<(command: Command) => void>>();
  private readonly output = new Map<string, Set<OutputSink>>();
  private readonly pendingOutcome = new Map<string, Set<(p: PendingOutcome) => void>>();
  private readonly closers = new Set<(err: Error) => void>();
  private readonly recentEnds = new Set<string>();

  /** Calls `fn` once when `settle` reports the command's end; returns an unsubscribe. */
  onTerminal(id: string, fn: (command: Command) => void): () => void {
    return listeners(this.terminal, id, fn);
  }

  /** Subscribes to a command's live output; returns an unsubscribe. */
  onOutput(id: string, fn: OutputSink): () => void {
    return listeners(this.output, id, fn);
  }

  /** Calls `fn` if the command's outcome is stuck unrecorded; returns an unsubscribe. */
  onPending(id: string, fn: (pending: PendingOutcome) => void): () => void {
    return listeners(this.pendingOutcome, id, fn);
  }

  /** Tells everyone waiting for the command that its outcome is not recorded yet. */
  pending(info: PendingOutcome): void {
    for (const fn of [...(this.pendingOutcome.get(info.commandId) ?? [])]) fn(info);
  }

  /** Calls `fn` when the queue stops; returns an unsubscribe. */
  onClose(fn: (err: Error) => void): () => void {
    this.closers.add(fn);
    return () => this.closers.delete(fn);
  }

  /** Reports a terminal row to everyone waiting for it. */
  settle(command: Command): void {
    const set = this.terminal.get(command.id);
    this.terminal.delete(command.id);
    this.recentEnds.add(command.id);
    if (this.recentEnds.size > RECENT_ENDS) {
      this.recentEnds.delete(this.recentEnds.values().next().value as string);
    }
    for (const fn of set ?? []) fn(command);
  }

  /**
   * True when this node reported the command's end lately (one of the last
   * {@link RECENT_ENDS}): a caller that registers only now has missed the notice.
   */
  endedLately(id: string): boolean {
    return this.recentEnds.has(id);
  }

  /** Fans a chunk out to the command's output listeners; a throwing listener is dropped. */
  emitOutput(id: string, stream: OutputStream, chunk: Uint8Array): void {
    const set = this.output.get(id);
    if (!set) return;
    const buf = Buffer.isBuffer(chunk)
      ? chunk
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    for (const fn of set) {
      try {
        fn(stream, buf);
      } catch {
        set.delete(fn);
      }
    }
  }

  /** Rejects every pending wait with `err` (the queue is stopping). */
  close(err: Error): void {
    for (const fn of [...this.closers]) fn(err);
    this.closers.clear();
  }
}

/** What a caller hears when a command ran but its outcome is not recorded yet. */
export function pendingOutcomeError(p: PendingOutcome): WorkbenchError {
  const ran = p.exitCode === null ? 'ran' : `ran (exit code ${p.exitCode})`;
  return new WorkbenchError(
    'unavailable',
    `unavailable: command ${p.commandId} ${ran} but its outcome and file changes are not recorded yet because the database is unreachable; this node keeps trying. Read the outcome later with GET /v1/commands/${p.commandId}, or repeat the call with the same callId`,
    { commandId: p.commandId, outcomePending: true, exitCode: p.exitCode },
  );
}
