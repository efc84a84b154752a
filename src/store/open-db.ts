import type { Db } from './db.js';
import { migrate } from './migrate.js';
import { openPglite } from './pglite-driver.js';
import { openPostgres } from './postgres-driver.js';

/** Where the rows live: a real server, or PGlite in this process under a directory. */
export type DatabaseTarget =
  | { kind: 'postgres'; url: string; maxConnections?: number }
  | { kind: 'pglite'; dataDir?: string; template?: string };

/** Opens the configured database and brings its schema up to date. */
export async function openDb(target: DatabaseTarget): Promise<Db> {
  const db =
    target.kind === 'postgres'
      ? openPostgres({ url: target.url, maxConnections: target.maxConnections })
      : await openPglite({
          ...(target.dataDir === undefined ? {} : { dataDir: target.dataDir }),
          ...(target.template === undefined ? {} : { template: target.template }),
        });
  try {
    await migrate(db);
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
  return db;
}
