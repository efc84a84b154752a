/**
 * A template of an empty PGlite cluster. Making a cluster in a new directory runs
 * `initdb` inside PGlite, which takes seconds (6.5 s here, most of a fresh start);
 * unpacking a cluster made once before takes about 1.5 s. The template is an empty
 * cluster (no schema: migrations run on every open as usual), made by the same PGlite
 * version, whose number is in the file name so an upgrade never loads an old one.
 *
 * @module
 */

import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';

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

/** The template's file in `dir`, named for this PGlite version. */
export function pgliteTemplatePath(dir: string): string {
  return join(dir, `pglite-${pgliteVersion()}-empty.tar.gz`);
}

/**
 * Writes the template to `path` (made aside and renamed into place, so a reader never
 * sees half of it). Does nothing when it exists.
 */
export async function writePgliteTemplate(path: string): Promise<void> {
  if (existsSync(path)) return;
  const scratch = await mkdtemp(join(dirname(path), '.pglite-template-'));
  try {
    const pg = new PGlite(join(scratch, 'cluster'));
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

/** The template's bytes for a new cluster, or undefined when there is none to use. */
export async function readPgliteTemplate(path: string | undefined): Promise<Blob | undefined> {
  if (path === undefined || !existsSync(path)) return undefined;
  return new Blob([await readFile(path)]);
}
