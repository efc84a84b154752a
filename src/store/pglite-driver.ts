import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { type DataDirLock, lockDataDir } from './data-dir-lock.js';
import type { Db, Queryable, Row } from './db.js';
import { rethrowing, translateDbError } from './errors.js';

/** Options for {@link openPglite}. */
export interface PgliteOptions {
  /** Directory holding the database files; omitted means in memory. */
  dataDir?: string;
  /**
   * A migrated cluster's template (`pglite-template.ts`) a new directory starts from,
   * instead of running initdb; ignored when absent or when the directory holds a
   * cluster already.
   */
  template?: string;
}

type Target = PGlite | Transaction;

function queryable(target: Target): Queryable {
  return {
    async query<T extends Row = Row>(text: string, params: readonly unknown[] = []) {
      try {
        const res = await target.query<T>(text, params as unknown[]);
        return res.rows;
      } catch (err) {
        throw translateDbError(err);
      }
    },
    async execute(text: string, params: readonly unknown[] = []) {
      try {
        const res = await target.query(text, params as unknown[]);
        return res.affectedRows ?? 0;
      } catch (err) {
        throw translateDbError(err);
      }
    },
    async script(text: string) {
      try {
        await target.exec(text);
      } catch (err) {
        throw translateDbError(err);
      }
    },
  };
}

/** The template's bytes for a new cluster, or undefined when there is none to use. */
async function readPgliteTemplate(path: string | undefined): Promise<Blob | undefined> {
  if (path === undefined || !existsSync(path)) return undefined;
  return new Blob([await readFile(path)]);
}

/**
 * Opens PGlite in this process, holding its directory's lock (`data-dir-lock.ts`)
 * until closed, so no second process opens the same files. PGlite serves one
 * connection, so every statement and every transaction is serialized here: a
 * transaction holds the connection until it ends, and statements issued meanwhile wait
 * their turn instead of interleaving.
 */
export async function openPglite(options: PgliteOptions = {}): Promise<Db> {
  let lock: DataDirLock | null = null;
  if (options.dataDir !== undefined) {
    await mkdir(options.dataDir, { recursive: true });
    lock = await lockDataDir(options.dataDir);
  }
  let pg: PGlite;
  try {
    const fresh = options.dataDir !== undefined && !existsSync(join(options.dataDir, 'PG_VERSION'));
    const template = fresh ? await readPgliteTemplate(options.template) : undefined;
    pg =
      options.dataDir === undefined
        ? new PGlite()
        : new PGlite(options.dataDir, template ? { loadDataDir: template } : {});
    await pg.waitReady;
  } catch (err) {
    await lock?.release();
    throw err;
  }
  let tail: Promise<unknown> = Promise.resolve();
  function serialized<T>(work: () => Promise<T>): Promise<T> {
    const next = tail.then(work, work);
    tail = next.catch(() => undefined);
    return next;
  }
  const top = queryable(pg);
  let closed = false;
  return {
    kind: 'pglite',
    query: (text, params) => serialized(() => top.query(text, params)),
    execute: (text, params) => serialized(() => top.execute(text, params)),
    script: (text) => serialized(() => top.script(text)),
    transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      return serialized(async () => {
        const thrown = new Set<unknown>();
        try {
          return await pg.transaction((tx) => rethrowing(thrown, () => fn(queryable(tx))));
        } catch (err) {
          // What `fn` threw is the caller's own (its statements translate their errors).
          if (thrown.has(err)) throw err;
          throw translateDbError(err);
        }
      });
    },
    close() {
      return serialized(async () => {
        if (closed) return;
        closed = true;
        try {
          await pg.close();
        } finally {
          await lock?.release();
        }
      });
    },
  };
}
