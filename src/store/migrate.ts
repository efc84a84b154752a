import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Db } from './db.js';

/** One numbered SQL file from `migrations/`. */
export interface Migration {
  /** The number before the first dash: `001-initial.sql` is version 1. */
  version: number;
  /** The file name. */
  name: string;
  /** The SQL text, run as one batch. */
  sql: string;
}

/**
 * Directory of the numbered SQL migrations. They live in the source tree beside this
 * module; compiled code under `dist/` reads the same files, so there is one copy.
 */
export const MIGRATIONS_DIR = [
  new URL('./migrations/', import.meta.url),
  new URL('../../../src/store/migrations/', import.meta.url),
]
  .map((u) => fileURLToPath(u))
  .find((dir) => existsSync(`${dir}/001-initial.sql`)) as string;

/** Any key works as long as every node uses the same one: "memql" in ASCII. */
const MIGRATION_LOCK_KEY = 0x6d656d716c;

/** Reads and orders the migration files; refuses gaps and duplicate numbers. */
export async function loadMigrations(dir: string = MIGRATIONS_DIR): Promise<Migration[]> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.sql')).sort();
  const migrations: Migration[] = [];
  for (const name of names) {
    const match = /^(\d+)-[a-z0-9-]+\.sql$/.exec(name);
    if (!match) throw new Error(`migration file name "${name}" must look like 001-name.sql`);
    const version = Number(match[1]);
    const expected = migrations.length + 1;
    if (version !== expected) {
      throw new Error(`migration "${name}" has version ${version}; expected ${expected}`);
    }
    migrations.push({ version, name, sql: await readFile(`${dir}/${name}`, 'utf8') });
  }
  return migrations;
}

/**
 * Applies the migrations the database has not seen yet, in order, in one
 * transaction. A transaction-scoped advisory lock makes concurrent starts safe: the
 * second node waits, then finds nothing left to do. Returns the versions applied.
 */
export async function migrate(db: Db, migrations?: Migration[]): Promise<number[]> {
  const all = migrations ?? (await loadMigrations());
  return db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await tx.execute(
      `create table if not exists memql_schema_migration (
         version integer primary key,
         name text not null,
         applied_at timestamptz not null default now()
       )`,
    );
    const rows = await tx.query<{ version: number }>('select version from memql_schema_migration');
    const applied = new Set(rows.map((r) => r.version));
    const done: number[] = [];
    for (const m of all) {
      if (applied.has(m.version)) continue;
      await tx.script(m.sql);
      await tx.execute('insert into memql_schema_migration (version, name) values ($1, $2)', [
        m.version,
        m.name,
      ]);
      done.push(m.version);
    }
    return done;
  });
}
