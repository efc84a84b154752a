/**
 * Guarded state moves of one lifecycle, after grpc-js's subchannel
 * `transitionToState`: a state moves only along the moves its machine declares, the
 * move says whether it happened, and each move writes one log line.
 *
 * Each machine declares its string union and, beside it, its moves with
 * {@link defineStateMachine}. The class that owns the lifecycle holds a
 * {@link StateMachine} and moves it only through {@link StateMachine.moveTo}. A refused
 * move changes nothing and writes nothing: the caller decides whether that is a
 * programming error (throw) or an ordinary race (carry on). It lives with the logs
 * because the line is its one effect.
 *
 * @module
 */

import type { Logger } from './logger.js';

/**
 * For each state, the states it may move to. A state absent from its own list does
 * not "move" to itself: a repeated move is refused like any other.
 */
export type StateMoves<S extends string> = { readonly [From in S]: readonly S[] };

/** One kind of lifecycle (see {@link defineStateMachine}). */
export interface StateMachineDefinition<S extends string> {
  /** Names the machine on each line (the `machine` field) and starts its message. */
  readonly machine: string;
  /** The state a new machine is in. */
  readonly initial: S;
  readonly moves: StateMoves<S>;
}

/**
 * Declares a lifecycle: the machine's name, the state it starts in and its moves.
 * Written beside the state union, so the union and what may happen to it read as one.
 */
export function defineStateMachine<S extends string>(
  machine: string,
  initial: S,
  moves: StateMoves<S>,
): StateMachineDefinition<S> {
  return { machine, initial, moves };
}

/** Options of {@link StateMachine}. */
export interface StateMachineOptions<S extends string> {
  /** Level of the line a move writes. Default `debug`. */
  readonly level?: 'debug' | 'info';
  /** Called after each move, once its line is written. */
  readonly onMove?: (from: S, to: S) => void;
}

/** Whether `moves` lets a machine in `from` move to `to`. */
export function canMove<S extends string>(moves: StateMoves<S>, from: S, to: S): boolean {
  return moves[from].includes(to);
}

/** The current state of one lifecycle, moved only along its declared moves. */
export class StateMachine<S extends string> {
  private current: S;

  /** @param log - the owner's scoped logger, which the move lines are written to. */
  constructor(
    private readonly definition: StateMachineDefinition<S>,
    private readonly log: Logger,
    private readonly options: StateMachineOptions<S> = {},
  ) {
    this.current = definition.initial;
  }

  /** The state now. */
  get state(): S {
    return this.current;
  }

  /**
   * Moves to `to` if the definition allows it from the state now, writes one line
   * `{ machine, from, to, ...fields }` and calls `onMove`. Returns whether it moved; a
   * refused move changes nothing and writes nothing.
   */
  moveTo(to: S, fields: Readonly<Record<string, unknown>> = {}): boolean {
    const { machine, moves } = this.definition;
    const from = this.current;
    if (!canMove(moves, from, to)) return false;
    this.current = to;
    this.log[this.options.level ?? 'debug']({ ...fields, machine, from, to }, `${machine} ${to}`);
    this.options.onMove?.(from, to);
    return true;
  }
}
