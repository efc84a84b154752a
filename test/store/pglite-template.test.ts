import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import t from 'tap';
import { openDb, pgliteTemplatePath, writePgliteTemplate } from '../../src/store/index.js';
import { loadMigrations, migrate } from '../../src/store/migrate.js';

/**
 * A new PGlite directory starts from the migrated template instead of initdb;
 * one that holds a cluster is opened as it is.
 */

const dir = await mkdtemp(join(tmpdir(), 'memql-template-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));

t.test(
  'the template is named for the PGlite version and the migrations, and migrated',
  async (t) => {
    const path = await pgliteTemplatePath(dir);
    t.match(path, /pglite-\d+\.\d+\.\d+-schema-[0-9a-f]{12}\.tar\.gz$/);
    await writePgliteTemplate(path);
    t.ok(existsSync(path));
    const db = await openDb({ kind: 'pglite', dataDir: join(dir, 'a'), template: path });
    t.same(await db.query('select count(*)::int as n from run'), [{ n: 0 }], 'migrated');
    const applied = await db.query<{ n: number }>(
      'select count(*)::int as n from memql_schema_migration',
    );
    t.equal(applied[0]!.n, (await loadMigrations()).length, 'every migration, from the template');
    t.same(await migrate(db), [], 'nothing left for the open to apply');
    // The template carries no lock of the process that made it: the lock is this one's.
    t.equal(await readFile(join(dir, 'a', 'memql.lock'), 'utf8'), `${process.pid}\n`);
    await db.close();
  },
);

t.test('a new directory is made from the template; an existing one is left as it is', async (t) => {
  // A template whose cluster holds a marker table shows which way a directory was made.
  const marked = join(dir, 'marked.tar.gz');
  const source = new PGlite(join(dir, 'source'));
  await source.exec('create table template_marker (x int)');
  await writeFile(marked, Buffer.from(await (await source.dumpDataDir('gzip')).arrayBuffer()));
  await source.close();

  const fresh = await openDb({ kind: 'pglite', dataDir: join(dir, 'fresh'), template: marked });
  t.same(
    await fresh.query(`select to_regclass('template_marker')::text as t`),
    [{ t: 'template_marker' }],
    'the new directory came from the template',
  );
  await fresh.query(`insert into template_marker values (7)`);
  await fresh.close();

  const existing = await openDb({ kind: 'pglite', dataDir: join(dir, 'fresh'), template: marked });
  t.same(
    await existing.query('select x from template_marker'),
    [{ x: 7 }],
    'reopening keeps its data: the template is not loaded over it',
  );
  await existing.close();

  const noTemplate = await openDb({
    kind: 'pglite',
    dataDir: join(dir, 'plain'),
    template: join(dir, 'absent.tar.gz'),
  });
  t.same(
    await noTemplate.query(`select to_regclass('template_marker')::text as t`),
    [{ t: null }],
    'a missing template falls back to initdb',
  );
  await noTemplate.close();
});
