import type { Db } from './db.js';
import { migrate } from './migrate.js';
import { openPglite } from './pglite-driver.js';
import { openPostgres } from './postgres-driver.js';

/** Where the rows live: a real server, or PGlite in this process under a directory. */
export type DatabaseTarget =
  | { kind: 'postgres'; url: string; maxConnections?: number }
  | { kind: 'pglite'; dataDir?: string };

/** Opens the configured database and brings its schema up to date. */
export async function openDb(target: DatabaseTarget): Promise<Db> {
  const db =
    target.kind === 'postgres'
      ? openPostgres({ url: target.url, maxConnections: target.maxConnections })
      : await openPglite({ dataDir: target.dataDir });
  try {
    await migrate(db);
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
  return db;
}
