/**
 * The one database seam. Everything that talks SQL goes through a {@link Db}; the
 * two drivers (postgres.js for a real server, PGlite for the embedded default) sit
 * behind it so the query families are written once.
 *
 * Placeholders are positional (`$1`, `$2`, ...). JSON values are passed as strings
 * and cast in SQL (`$1::text::jsonb`: typed as text so neither driver re-encodes it) so both drivers agree on their encoding; `int8`
 * columns come back as JavaScript numbers from both drivers.
 */

/** A result row: column name to decoded value. */
export type Row = Record<string, unknown>;

/** Anything that can run a statement: the database itself or an open transaction. */
export interface Queryable {
  /** Runs one statement and returns its rows (empty for statements without rows). */
  query<T extends Row = Row>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /** Runs one statement and returns how many rows it touched. */
  execute(text: string, params?: readonly unknown[]): Promise<number>;
  /** Runs several `;`-separated statements without parameters (migrations). */
  script(text: string): Promise<void>;
}

/** Which driver a {@link Db} runs on. */
export type DbKind = 'postgres' | 'pglite';

/** A `LISTEN` a {@link Db} holds open; `close` ends it. */
export interface Subscription {
  close(): Promise<void>;
}

/** A database handle owned by the node that opened it. */
export interface Db extends Queryable {
  /** The driver in use, for logs and for the few places where the two differ. */
  readonly kind: DbKind;
  /**
   * Runs `fn` inside one transaction: committed when `fn` resolves, rolled back when
   * it throws. Statements inside must go through the `tx` handle.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Listens for `NOTIFY` on `channel` on a connection of its own, calling `onNotify`
   * with each payload, and `onListening` each time that connection is (re)established:
   * what was notified while it was down is lost, so the caller catches up then.
   * Resolves once listening. Optional: postgres.js has it; PGlite, one connection in
   * this process, does not (statements of its only connection cannot wake another).
   */
  listen?(
    channel: string,
    onNotify: (payload: string) => void,
    onListening?: () => void,
  ): Promise<Subscription>;
  /** Closes the driver; later calls fail. */
  close(): Promise<void>;
}
