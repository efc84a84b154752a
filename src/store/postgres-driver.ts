import postgres from 'postgres';
import type { Db, Queryable, Row } from './db.js';
import { rethrowing, translateDbError } from './errors.js';

/** Options for {@link openPostgres}. */
export interface PostgresOptions {
  /** `postgres://` connection URL. */
  url: string;
  /** Pool size (connections). Default 10. */
  maxConnections?: number;
  /** Seconds to wait for a connection before failing. Default 10. */
  connectTimeoutSeconds?: number;
}

type Sql = postgres.Sql | postgres.TransactionSql;

/**
 * Statements with parameters are prepared once per connection: unprepared, postgres.js
 * sends each one as a parse and describe, waits for the parameter types, then binds
 * and executes it, so every statement cost two round trips and a fresh parse and plan.
 * The store's statement texts are a fixed set (values only ever travel as
 * parameters), so each connection holds a bounded number of them.
 */
const PREPARED = { prepare: true } as const;

function queryable(sql: Sql): Queryable {
  return {
    async query<T extends Row = Row>(text: string, params: readonly unknown[] = []) {
      try {
        const rows = await sql.unsafe(text, params as postgres.ParameterOrJSON<never>[], PREPARED);
        return [...rows] as unknown as T[];
      } catch (err) {
        throw translateDbError(err);
      }
    },
    async execute(text: string, params: readonly unknown[] = []) {
      try {
        const res = await sql.unsafe(text, params as postgres.ParameterOrJSON<never>[], PREPARED);
        return res.count;
      } catch (err) {
        throw translateDbError(err);
      }
    },
    async script(text: string) {
      try {
        // No parameters: postgres.js sends this over the simple protocol, which
        // accepts several statements.
        await sql.unsafe(text);
      } catch (err) {
        throw translateDbError(err);
      }
    },
  };
}

/**
 * The longest pause between two attempts to reconnect, seconds. postgres.js backs off
 * up to 20 s by default; after an outage every node must be back within a couple of
 * seconds, because stale recovery (`src/queue/recovery-rule.ts`) gives live workers
 * only a short while to renew their heartbeats before it counts them gone.
 */
export const RECONNECT_BACKOFF_MAX_SECONDS = 2;

/** Seconds before reconnect attempt `retries`: doubling from 50 ms, jittered, capped. */
export function reconnectBackoff(retries: number): number {
  const ceiling = Math.min(0.05 * 2 ** retries, RECONNECT_BACKOFF_MAX_SECONDS);
  return ceiling * (0.5 + Math.random() / 2);
}

/** Opens a pooled connection to a real Postgres server through postgres.js. */
export function openPostgres(options: PostgresOptions): Db {
  const sql = postgres(options.url, {
    max: options.maxConnections ?? 10,
    connect_timeout: options.connectTimeoutSeconds ?? 10,
    backoff: reconnectBackoff,
    onnotice: () => {},
    // int8 as a JavaScript number, as PGlite returns it: our counters and sizes stay
    // far below 2^53.
    types: {
      int8: {
        to: 20,
        from: [20],
        serialize: (value: number) => String(value),
        parse: (value: string) => Number(value),
      },
    },
  });
  const top = queryable(sql);
  return {
    kind: 'postgres',
    query: top.query,
    execute: top.execute,
    script: top.script,
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const thrown = new Set<unknown>();
      try {
        return (await sql.begin((tx) => rethrowing(thrown, () => fn(queryable(tx))))) as T;
      } catch (err) {
        // What `fn` threw is the caller's own (its statements translate their errors).
        if (thrown.has(err)) throw err;
        throw translateDbError(err);
      }
    },
    async listen(channel, onNotify, onListening) {
      try {
        // postgres.js listens on one dedicated connection and listens again after it
        // reconnects, calling `onListening` each time.
        const meta = await sql.listen(channel, onNotify, onListening);
        return { close: () => meta.unlisten().then(() => undefined) };
      } catch (err) {
        throw translateDbError(err);
      }
    },
    async close() {
      await sql.end({ timeout: 5 });
    },
  };
}
