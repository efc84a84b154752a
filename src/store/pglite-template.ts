/**
 * A template of a new PGlite cluster. Making a cluster in a new directory runs
 * `initdb` inside PGlite, which takes seconds (6.5 s here, most of a fresh start), and
 * then every migration (about another second); unpacking a cluster made once before
 * takes about 1.5 s. The template is a cluster with the schema of today's migrations
 * and no rows, made by the same PGlite version: the version and a hash of the
 * migration files are in its name, so an upgrade or a new migration never loads an
 * old one (migrations still run on every open, and find nothing left to do).
 *
 * @module
 */

import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { loadMigrations, migrate } from './migrate.js';
import { openPglite } from './pglite-driver.js';

/** The installed PGlite's version. */
export function pgliteVersion(): string {
  // The package exports no ./package.json: walk up from its entry to find it.
  let dir = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === '@electric-sql/pglite' && pkg.version) return pkg.version;
    }
    if (dir === dirname(dir)) throw new Error('cannot find the version of @electric-sql/pglite');
    dir = dirname(dir);
  }
}

/** The template's file in `dir`, named for this PGlite version and these migrations. */
export async function pgliteTemplatePath(dir: string): Promise<string> {
  const hash = createHash('sha256');
  for (const m of await loadMigrations()) hash.update(`${m.name}\0${m.sql}\0`);
  return join(dir, `pglite-${pgliteVersion()}-schema-${hash.digest('hex').slice(0, 12)}.tar.gz`);
}

/**
 * Writes the template to `path` (made aside and renamed into place, so a reader never
 * sees half of it). Does nothing when it exists.
 */
export async function writePgliteTemplate(path: string): Promise<void> {
  if (existsSync(path)) return;
  const scratch = await mkdtemp(join(dirname(path), '.pglite-template-'));
  try {
    const cluster = join(scratch, 'cluster');
    // Migrated as a node opens it; its lock file is gone once it is closed, so the
    // cluster is dumped without one.
    const db = await openPglite({ dataDir: cluster });
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
    const pg = new PGlite(cluster);
    await pg.waitReady;
    const dump = await pg.dumpDataDir('gzip');
    await pg.close();
    const file = join(scratch, 'template.tar.gz');
    await writeFile(file, Buffer.from(await dump.arrayBuffer()));
    await rename(file, path);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
